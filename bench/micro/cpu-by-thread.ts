/**
 * Where a target's CPU time per request goes, by thread and by user and system time: each target
 * in its own process pinned to CPU 0, wrk on CPU 1 (a warm-up load, then the measured one), and
 * /proc/<pid>/task/<tid>/stat read before and after; the main thread apart from the others (V8's
 * helper threads, libuv's pool, worker threads). Targets alternate, one process each per round.
 *
 *   npx tsx bench/micro/cpu-by-thread.ts service,node-features,fastify S1 3 8     # targets, scenario, processes, seconds
 *
 * Build first (`npm run build`); wrk must be installed.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLoad } from '../load.js';
import { scenarios } from '../scenarios.js';
import { cpuTimesOf, startTarget, type TargetName } from '../targets.js';
import { loadOf } from '../warm-up.js';

const [targetList = 'service,node-features,fastify', scenarioId = 'S1', processesText = '3', secondsText = '8'] = process.argv.slice(2);
const scenario = scenarios().find((s) => s.id === scenarioId);
if (scenario === undefined) throw new Error(`no scenario ${scenarioId}`);
const work = mkdtempSync(join(tmpdir(), 'cpu-by-thread-'));

/** User and system µs so far of each thread, by thread id. */
const byThread = (pid: number) => new Map(readdirSync(`/proc/${pid}/task`).map((tid) => [tid, cpuTimesOf(`/proc/${pid}/task/${tid}/stat`)]));

for (let round = 0; round < Number(processesText); round++) {
  for (const name of targetList.split(',') as TargetName[]) {
    const target = await startTarget(name, ['taskset', '-c', '0'], work);
    const load = { ...loadOf(target.base, scenario, work, 10), connections: 10, seconds: 4 };
    await generateLoad('wrk', load, ['taskset', '-c', '1'], work);
    const before = byThread(target.pid);
    const result = await generateLoad('wrk', { ...load, seconds: Number(secondsText) }, ['taskset', '-c', '1'], work);
    const after = byThread(target.pid);
    await target.stop();
    // A thread that ended during the load (an idle worker thread) took its time with it: threads in both readings count.
    const sums = { main: { user: 0, system: 0 }, others: { user: 0, system: 0 } };
    for (const [tid, now] of after) {
      const then = before.get(tid);
      if (then === undefined) continue;
      const sum = tid === String(target.pid) ? sums.main : sums.others;
      sum.user += now.user - then.user;
      sum.system += now.system - then.system;
    }
    const per = (part: 'main' | 'others', kind: 'user' | 'system') => (sums[part][kind] / result.requests).toFixed(1);
    process.stdout.write(
      `${round} ${name.padEnd(14)} ${scenarioId} ${Math.round(result.requestsPerSecond)} req/s; µs a request: ` +
        `main thread user ${per('main', 'user')} system ${per('main', 'system')}, other threads user ${per('others', 'user')} system ${per('others', 'system')}\n`,
    );
  }
}
