/**
 * Whether a target has settled when the bench measures it: each target in its own process pinned
 * to CPU 0, given the bench's mixed warm-up (its requests one at a time, then `loads` passes of
 * every scenario under load: bench/warm-up.ts), then the scenario in four successive wrk loads (2,
 * 5, 5 and 5 s; the bench measures the second, after its 2 s warm-up load). Each load's req/s, CPU
 * time per request and p99: a process still settling shows it in a p99 far above the later loads'.
 * Targets alternate, one process each per round.
 *
 *   npx tsx bench/micro/settling.ts service,node-features S1 4 0   # targets, scenario, processes, warm-up passes under load
 *   npx tsx bench/micro/settling.ts service,node-features S1 4 3   # the bench's default
 *
 * Build first (`npm run build`); wrk must be installed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLoad } from '../load.js';
import { scenarios } from '../scenarios.js';
import { cpuMicroseconds, startTarget, type TargetName } from '../targets.js';
import { loadOf, warmUp, WARM_UP_PASSES } from '../warm-up.js';

const [targetList = 'service,node-features', scenarioId = 'S1', processesText = '4', loadsText = '3'] = process.argv.slice(2);
const scenario = scenarios().find((s) => s.id === scenarioId);
if (scenario === undefined) throw new Error(`no scenario ${scenarioId}`);
if (!/^\d+$/.test(processesText) || !/^\d+$/.test(loadsText)) throw new Error('processes and warm-up passes under load are whole numbers');
const work = mkdtempSync(join(tmpdir(), 'settling-'));
const [serverPin, loadPin] = [
  ['taskset', '-c', '0'],
  ['taskset', '-c', '1'],
];

for (let round = 0; round < Number(processesText); round++) {
  for (const name of targetList.split(',') as TargetName[]) {
    const target = await startTarget(name, serverPin, work);
    await warmUp(target.base, { passes: WARM_UP_PASSES, loads: Number(loadsText), generator: 'wrk', pin: loadPin, workDir: work, connections: 50 });
    const loads: string[] = [];
    for (const seconds of [2, 5, 5, 5]) {
      const before = cpuMicroseconds(target.pid);
      const result = await generateLoad('wrk', { ...loadOf(target.base, scenario, work, 50), seconds }, loadPin, work);
      const cpu = (cpuMicroseconds(target.pid) - before) / result.requests;
      loads.push(`${Math.round(result.requestsPerSecond)} req/s ${cpu.toFixed(1)} µs p99 ${result.p99Ms} ms`);
    }
    await target.stop();
    process.stdout.write(`${round} ${name.padEnd(14)} ${scenarioId} warm-up loads ${loadsText}: ${loads.join(' | ')}\n`);
  }
}
