import { availableParallelism } from 'node:os';
import { formatBytes, SETTINGS, workerCount, type Config } from '../../config.js';
import { detectMemoryLimit, processShare } from './memory-limit.js';
import { MemoryBudget } from './budget.js';
import { createOffloadPool, type OffloadPool } from './offload-pool.js';

const env = { memoryLimit: SETTINGS.memoryLimit.env, workers: SETTINGS.workers.env, poolThreads: SETTINGS.poolThreads.env } as const;

export interface MemorySetup {
  /** This process's share of MEMORY_LIMIT. */
  readonly limit: number;
  readonly source: 'MEMORY_LIMIT' | 'cgroup' | 'machine';
  readonly budget: MemoryBudget;
  readonly pool: OffloadPool;
  /** One line for the startup log. */
  describe(): string;
}

// A worker thread's own memory before it does anything (a V8 isolate and Node's bootstrap), measured with an idle pool.
const THREAD_BASE_BYTES = 24 * 1024 * 1024;
// Left unreserved: the event loop's own garbage between collections, allocator slack.
const HEADROOM = 0.1;
// Large requests leave this much of the budget to small ones, so that those are answered while large ones run.
const SMALL_REQUEST_SHARE = 0.1;
const MIB = 1024 * 1024;

/**
 * The memory budget of this process: its share of MEMORY_LIMIT (docs/behaviour.md §3), less
 * what the process already uses, its pool threads, its log backlog and some headroom. Throws
 * naming MEMORY_LIMIT when nothing would be left for requests.
 *
 * @example
 * const memory = memorySetup(DEFAULT_CONFIG, undefined);
 * memory.budget.ceiling(false); // the bytes one request may reserve
 */
export function memorySetup(config: Config, fixedCapacity: number | undefined): MemorySetup {
  const detected = config.memoryLimit === 'auto' ? detectMemoryLimit() : undefined;
  const limit = processShare(detected?.bytes ?? (config.memoryLimit as number), workerCount(config));
  const threads = config.poolThreads === 'auto' ? Math.max(1, Math.floor(availableParallelism() / workerCount(config)) - 1) : config.poolThreads;
  // The log lines that may wait for a slow standard output (LOG_BACKLOG_BYTES) are memory requests cannot have.
  const logBacklog = config.logFormat === 'json' ? config.logBacklogBytes : 0;
  const used = process.memoryUsage().rss + threads * THREAD_BASE_BYTES + logBacklog;
  const capacity = fixedCapacity ?? Math.floor((limit - used) * (1 - HEADROOM));
  if (capacity < 32 * MIB) {
    throw new RangeError(
      `${env.memoryLimit} leaves ${formatBytes(Math.max(0, capacity))} for requests: this process's share is ${formatBytes(limit)} and it uses ${formatBytes(used)} before any request. Raise ${env.memoryLimit} or lower ${env.workers} or ${env.poolThreads}`,
    );
  }
  const budget = new MemoryBudget(capacity, Math.floor(capacity * SMALL_REQUEST_SHARE));
  const heapMb = Math.min(4096, Math.max(64, Math.ceil(budget.ceiling(true) / MIB)));
  // Every limit an operation, a batch or a stream reads is a setting (config.ts): they go as the configuration.
  const pool = createOffloadPool({ threads, heapMb, limits: config, niceness: config.poolThreadNiceness });
  const source = detected === undefined ? 'MEMORY_LIMIT' : detected.source;
  return {
    limit,
    source,
    budget,
    pool,
    describe: () =>
      `${formatBytes(limit)} (${source === 'MEMORY_LIMIT' ? env.memoryLimit : `${env.memoryLimit}=auto: the ${source}'s`}${workerCount(config) > 1 ? ", this worker's share" : ''}), ` +
      `${formatBytes(capacity)} of it for requests; bodies over ${formatBytes(config.offloadBodyBytes)} go to ${threads} worker thread${threads === 1 ? '' : 's'} of ${heapMb} MiB heap`,
  };
}
