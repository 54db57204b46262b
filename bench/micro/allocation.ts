/**
 * Bytes a target allocates per request, and its collections: the target runs with V8's
 * `--trace-gc-nvp` (one line per collection, with what was allocated since the one before),
 * pinned to CPU 0, wrk on CPU 1; the lines of the measured load (after a warm-up load) are summed
 * over the requests answered. A count, which the machine's noise does not move.
 *
 *   npx tsx bench/micro/allocation.ts service,node-features,fastify,baseline S1
 *
 * Build first (`npm run build`); wrk must be installed.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLoad } from '../load.js';
import { scenarios } from '../scenarios.js';
import { startTarget, type TargetName } from '../targets.js';
import { loadOf } from '../warm-up.js';

const [targetList = 'service,node-features,fastify,baseline', scenarioId = 'S1', secondsText = '8'] = process.argv.slice(2);
const scenario = scenarios().find((s) => s.id === scenarioId);
if (scenario === undefined) throw new Error(`no scenario ${scenarioId}`);
const work = mkdtempSync(join(tmpdir(), 'allocation-'));
// --trace-gc-nvp writes to stdout, which is the target's log file.
const collections = (logFile: string) =>
  readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('pause='));

for (const name of targetList.split(',') as TargetName[]) {
  const target = await startTarget(name, ['taskset', '-c', '0'], work, {}, ['--trace-gc-nvp']);
  const load = { ...loadOf(target.base, scenario, work, 10), connections: 10, seconds: 5 };
  await generateLoad('wrk', load, ['taskset', '-c', '1'], work);
  const before = collections(target.logFile).length;
  const result = await generateLoad('wrk', { ...load, seconds: Number(secondsText) }, ['taskset', '-c', '1'], work);
  await target.stop();
  const lines = collections(target.logFile).slice(before);
  const sum = (pattern: RegExp) => lines.reduce((total, line) => total + Number(pattern.exec(line)?.[1] ?? 0), 0);
  const scavenges = lines.filter((line) => line.includes('gc=s ')).length;
  process.stdout.write(
    `${name.padEnd(14)} ${scenarioId}: ${result.requests} requests; ${Math.round(sum(/ allocated=(\d+)/) / result.requests)} bytes allocated a request; ` +
      `${lines.length} collections (${scavenges} scavenges), ${((sum(/pause=([\d.]+)/) * 1000) / result.requests).toFixed(2)} µs of pause a request\n`,
  );
}
