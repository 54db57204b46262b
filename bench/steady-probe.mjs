// @ts-check
/**
 * Loaded into a target by the bench's steady-rate part (`node --import bench/steady-probe.mjs`), never
 * by the service itself: what a fixed arrival rate does to the process, measured inside it. The
 * first SIGUSR2 starts a window; the second ends it and writes, to the file BENCH_PROBE_FILE names,
 * one JSON object: the event loop's delay (monitorEventLoopDelay at 1 ms resolution: its max and
 * p99), the time the main thread spent in GC pauses and its longest pause (v8.GCProfiler), and the
 * bytes allocated (the used heap before each GC less after the one before it, plus the growth
 * since the last; Node 26's `total_allocated_bytes` as well where there is one).
 */
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const file = process.env.BENCH_PROBE_FILE;
/** @type {{ delay: import('node:perf_hooks').IntervalHistogram, profiler: GCProfiler, usedAtStart: number, allocatedAtStart: number | undefined, startedAt: bigint } | undefined} */
let window;

/** @param {Record<string, number>} stats */
const allocatedTotal = (stats) => (typeof stats.total_allocated_bytes === 'number' ? stats.total_allocated_bytes : undefined);

process.on('SIGUSR2', () => {
  if (file === undefined) return;
  if (window === undefined) {
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const profiler = new GCProfiler();
    profiler.start();
    const stats = /** @type {Record<string, number>} */ (/** @type {unknown} */ (getHeapStatistics()));
    window = { delay, profiler, usedAtStart: stats.used_heap_size ?? 0, allocatedAtStart: allocatedTotal(stats), startedAt: process.hrtime.bigint() };
    return;
  }
  const { delay, profiler, usedAtStart, allocatedAtStart, startedAt } = window;
  window = undefined;
  delay.disable();
  const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const gcs = profiler.stop()?.statistics ?? [];
  let allocated = 0;
  let after = usedAtStart;
  let pauseMicros = 0;
  let longestMicros = 0;
  for (const gc of gcs) {
    allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - after);
    after = gc.afterGC.heapStatistics.usedHeapSize;
    pauseMicros += gc.cost;
    longestMicros = Math.max(longestMicros, gc.cost);
  }
  const stats = /** @type {Record<string, number>} */ (/** @type {unknown} */ (getHeapStatistics()));
  allocated += Math.max(0, (stats.used_heap_size ?? 0) - after);
  const allocatedNow = allocatedTotal(stats);
  writeFileSync(
    file,
    JSON.stringify({
      seconds,
      loopDelayMaxMs: delay.max / 1e6,
      loopDelayP99Ms: delay.percentile(99) / 1e6,
      gcCount: gcs.length,
      gcPauseMsPerSecond: pauseMicros / 1000 / seconds,
      gcLongestPauseMs: longestMicros / 1000,
      allocatedBytes: allocated,
      ...(allocatedNow === undefined || allocatedAtStart === undefined ? {} : { v8AllocatedBytes: allocatedNow - allocatedAtStart }),
    }),
  );
});
