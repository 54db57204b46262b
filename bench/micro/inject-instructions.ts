/**
 * Two builds of the service in one process under callgrind, answering the same request through
 * `inject` in alternating blocks; each block is counted in instructions between two
 * `callgrind_control --dump`s, so that the machine's noise cannot move the comparison (as
 * inject-ab.ts does with CPU time, which it can). Both apps use the production logger (pino at
 * info, ACCESS_LOG=minimal), writing to /dev/null. Build both first (`npm run build`).
 *
 *   npx tsx bench/micro/inject-instructions.ts <before-dist> <S1|S2|S3|B3> [block] [rounds]
 *   BEFORE_CONFIG='{"corsOrigins":"off"}' npx tsx bench/micro/inject-instructions.ts dist S1   # one setting's cost
 *
 * Only the main thread is counted: V8's optimizing compiler and parts of its garbage collector run
 * on helper threads, at moments that vary from run to run.
 *
 * Prints the instructions per request of each block and the before/after ratio per round (above 1:
 * this build runs fewer); the first two rounds warm up and are left out of the median.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INJECT_REQUESTS } from './inject-requests.js';

const [beforeDist, scenario = 'S1', blockText = '2000', roundsText = '6'] = process.argv.slice(2);
if (beforeDist === undefined) throw new Error('usage: inject-instructions.ts <before-dist> <S1|S2|S3|B3> [block] [rounds]');
// valgrind and vgdb name their pipe after USER and HOST: the same on both sides, whatever the shell has.
const VGDB_ENV = { USER: 'bench', LOGNAME: 'bench', HOST: 'bench' };

if (process.env.INJECT_UNDER_CALLGRIND === undefined) {
  // The parent: runs this same script under callgrind, then reads one dump per block.
  const dir = mkdtempSync(join(tmpdir(), 'inject-callgrind-'));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--separate-threads=yes',
      `--callgrind-out-file=${join(dir, 'cg.out')}`,
      process.execPath,
      ...process.execArgv,
      new URL(import.meta.url).pathname,
      ...process.argv.slice(2),
    ],
    { env: { ...process.env, ...VGDB_ENV, INJECT_UNDER_CALLGRIND: '1' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  const blocks = output
    .split('\n')
    .filter((line) => line.startsWith('block '))
    .map((line) => {
      const [, dump = '', name = '', round = '', requests = ''] = line.split(' ');
      // The main thread's count alone (--separate-threads): V8 compiles and collects partly on helper threads, at moments the count should not depend on.
      const file = join(dir, `cg.out.${dump}-01`);
      const total = existsSync(file) ? Number(/^summary: (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1]) : NaN;
      return { name, round: Number(round), perRequest: total / Number(requests) };
    });
  rmSync(dir, { recursive: true, force: true });
  const per = (name: string) => blocks.filter((b) => b.name === name && b.round >= 2);
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  const ratios = per('after').map((after, i) => (per('before')[i]?.perRequest ?? NaN) / after.perRequest);
  for (const block of blocks)
    console.log(`round ${block.round} ${block.name.padEnd(6)} ${Math.round(block.perRequest).toLocaleString('en')} instructions/request`);
  console.log(
    `${scenario}: instructions/request after ${Math.round(median(per('after').map((b) => b.perRequest))).toLocaleString('en')}, ` +
      `before ${Math.round(median(per('before').map((b) => b.perRequest))).toLocaleString('en')}; before/after by round: median ${median(ratios).toFixed(3)} ` +
      `(${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`,
  );
} else {
  type App = { inject(request: object): Promise<{ statusCode: number; body: string }>; ready(): Promise<unknown>; close(): Promise<unknown> };
  const builds = { after: new URL('../../dist', import.meta.url).pathname, before: beforeDist };
  const { default: pino } = await import('pino');
  const apps: Record<string, App> = {};
  // Settings of either build (BEFORE_CONFIG, AFTER_CONFIG: JSON), to weigh one feature against its absence.
  const configs: Record<string, object> = {
    after: JSON.parse(process.env.AFTER_CONFIG ?? '{}') as object,
    before: JSON.parse(process.env.BEFORE_CONFIG ?? '{}') as object,
  };
  for (const [name, dist] of Object.entries(builds)) {
    const { buildApp } = (await import(`${dist}/app.js`)) as { buildApp: (config: object, options: object) => Promise<App> };
    apps[name] = await buildApp(configs[name] as object, { logger: { level: 'info', stream: pino.destination('/dev/null') } });
    await apps[name].ready();
  }
  const REQUESTS = INJECT_REQUESTS;
  const json = { 'content-type': 'application/json' };
  // The mixed warm-up every target gets in the bench: each scenario and a 400, 404 and 405.
  const warmUp = [
    ...Object.values(REQUESTS),
    { method: 'POST', url: '/api/isEven', payload: '{"input":"x"}' },
    { method: 'GET', url: '/nope' },
    { method: 'DELETE', url: '/api/sort' },
  ];
  for (const app of Object.values(apps)) for (let pass = 0; pass < 20; pass++) for (const request of warmUp) await app.inject({ ...request, headers: json });
  const request = { ...REQUESTS[scenario], headers: json };
  const block = Number(blockText);
  let dumps = 0;
  const dump = () => {
    execFileSync('callgrind_control', ['--dump', String(process.pid)], { stdio: 'ignore', env: { ...process.env, ...VGDB_ENV } });
    return ++dumps;
  };
  dump();
  for (let round = 0; round < Number(roundsText); round++) {
    for (const name of round % 2 === 0 ? ['after', 'before'] : ['before', 'after']) {
      for (let i = 0; i < block; i++) {
        const response = await apps[name]!.inject(request);
        if (response.statusCode !== 200) throw new Error(`${name}: ${response.statusCode} ${response.body}`);
      }
      process.stdout.write(`block ${dump()} ${name} ${round} ${block}\n`);
    }
  }
  for (const app of Object.values(apps)) await app.close();
}
