/**
 * Two builds of the service in one process, answering the same request in alternating blocks
 * through `inject` (no socket): `npx tsx bench/micro/inject-ab.ts <before-dist> <scenario> [block] [rounds]`,
 * with `npm run build` done in both checkouts. Prints the CPU time per request of each build and
 * the ratio before/after per round (above 1: this build is faster). Both builds run in the same
 * process at the same moments, so a noisy machine moves them alike; the first two rounds warm up.
 * Scenarios: S1 (POST isEven), S2 (GET isOdd), S3 (sort of 1,000 integers), B3 (batch of 200 mixed).
 */
import { INJECT_REQUESTS } from './inject-requests.js';

type App = { inject(request: object): Promise<{ statusCode: number; body: string }>; ready(): Promise<unknown>; close(): Promise<unknown> };

const [beforeDist, scenario = 'S3', blockText = '500', roundsText = '12'] = process.argv.slice(2);
if (beforeDist === undefined) throw new Error('usage: inject-ab.ts <before-dist> <S1|S2|S3|B3> [block] [rounds]');
const builds = { after: new URL('../../dist', import.meta.url).pathname, before: beforeDist };
const apps: Record<string, App> = {};
for (const [name, dist] of Object.entries(builds)) {
  const { buildApp } = (await import(`${dist}/app.js`)) as { buildApp: (config: object, options: object) => Promise<App> };
  // The production logger (pino at info, ACCESS_LOG=minimal): what every request pays for it counts.
  apps[name] = await buildApp({}, {});
  await apps[name].ready();
}

const request = { ...INJECT_REQUESTS[scenario], headers: { 'content-type': 'application/json' } };
const block = Number(blockText);
const rounds = Number(roundsText);
const micros: Record<string, number[]> = { after: [], before: [] };
for (let round = 0; round < rounds; round++) {
  for (const name of round % 2 === 0 ? ['after', 'before'] : ['before', 'after']) {
    const start = process.cpuUsage();
    for (let i = 0; i < block; i++) {
      const response = await apps[name]!.inject(request);
      if (response.statusCode !== 200) throw new Error(`${name}: ${response.statusCode} ${response.body}`);
    }
    const used = process.cpuUsage(start);
    if (round >= 2) micros[name]!.push((used.user + used.system) / block);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ratios = micros.after!.map((after, i) => micros.before![i]! / after);
console.log(
  `${scenario}: µs/request after ${median(micros.after!).toFixed(1)}, before ${median(micros.before!).toFixed(1)}; ` +
    `before/after by round: median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`,
);
for (const app of Object.values(apps)) await app.close();
