import { Piscina } from 'piscina';
import type { OperationId } from '../../operations/index.js';
import type { Tally } from '../../engine/items.js';
import type { BatchLimits } from '../../engine/batch.js';
import type { OffloadTask, PoolOutcome, PoolThreadData } from './offload-worker.js';
import { ProblemError } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';

export interface OffloadPool {
  /** The JSON bytes of the answer for this body (with a batch's tally), or a `ProblemError` with the problem the route would have answered. */
  answer(operation: OperationId | 'batch', body: Buffer): Promise<{ json: Buffer; tally?: Tally }>;
  /** Starts the threads now rather than on the first large body; resolves once one has answered. */
  warm(): Promise<void>;
  /** How long, in milliseconds, a body arriving now waits to start with `ahead` bodies admitted before it and not yet answered (overload control, overload-control.ts). */
  waitMs(ahead: number): number;
  close(): Promise<void>;
}

export interface OffloadPoolOptions {
  readonly threads: number;
  /** Each thread's V8 old-generation limit, so that it collects before the process passes MEMORY_LIMIT. */
  readonly heapMb: number;
  readonly limits: BatchLimits;
  /** How much lower each thread's CPU priority is than the event loop's (POOL_THREAD_NICENESS). */
  readonly niceness: number;
}

// Under tsx (tests, `npm run dev`) the worker is the TypeScript source; built, it is the .js beside this file.
const WORKER = new URL(import.meta.url.endsWith('.ts') ? './offload-worker.ts' : './offload-worker.js', import.meta.url);

const WORKER_FAILED_RETRY_AFTER_SECONDS = 1;
/**
 * A pool thread's V8 limits: its old generation (`heapMb`, from the memory budget, so that it
 * collects before the process passes MEMORY_LIMIT) and a fixed young generation, so that the
 * memory a task takes (estimates.ts) does not depend on the Node.js version's defaults.
 */
export const THREAD_RESOURCE_LIMITS = (heapMb: number) => ({ maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB });
const YOUNG_GENERATION_MB = 24;

// Long enough to serve a burst of large bodies with threads already started.
const IDLE_THREAD_MS = 5_000;

/**
 * A pool of worker threads (piscina, https://github.com/piscinajs/piscina) that answer large
 * bodies from parse to serialized answer, so the event loop stays free for small requests and
 * probes. The body's buffer is transferred to the thread and the answer's back, never copied.
 */
export function createOffloadPool(options: OffloadPoolOptions): OffloadPool {
  // Made on first use: an app that never sees a large body (most tests) starts no thread.
  let pool: Piscina<Omit<OffloadTask, 'limits'> | null, PoolOutcome | null> | undefined;
  const started = (): Piscina<Omit<OffloadTask, 'limits'> | null, PoolOutcome | null> =>
    (pool ??= new Piscina<Omit<OffloadTask, 'limits'> | null, PoolOutcome | null>({
      filename: WORKER.href,
      // A thread that has answered a large body keeps the heap it grew (V8 gives little of it
      // back); one left idle for IDLE_THREAD_MS ends, and the process's memory falls back.
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: IDLE_THREAD_MS,
      resourceLimits: THREAD_RESOURCE_LIMITS(options.heapMb),
      // Cloned once per thread, not with every task.
      workerData: { limits: options.limits, niceness: options.niceness } satisfies PoolThreadData,
    }));
  const completions = new CompletionInterval();
  return {
    warm: async () => void (await started().run(null)),
    // A free thread takes it at once; past them, each body ahead holds it back one completion interval.
    waitMs: (ahead) => (ahead < options.threads ? 0 : (ahead - options.threads + 1) * completions.ms()),
    async answer(operation, body) {
      const bytes = ownBuffer(body);
      let outcome: PoolOutcome | null;
      const settled = completions.started();
      try {
        outcome = await started().run({ operation, bytes }, { transferList: [bytes.buffer as ArrayBuffer] });
      } catch {
        // The thread ran out of its heap (or died): the estimate was short. Another try may fit.
        throw new ProblemError(503, LIMIT_TEXTS.memoryInThread, undefined, {
          'retry-after': String(WORKER_FAILED_RETRY_AFTER_SECONDS),
        });
      } finally {
        settled();
      }
      if (outcome === null) throw new TypeError('the pool answered a warm-up');
      if ('problem' in outcome) throw new ProblemError(outcome.problem.status, outcome.problem.detail, outcome.problem.errors);
      const json = outcome instanceof Uint8Array ? outcome : outcome.json;
      return { json: Buffer.from(json.buffer, json.byteOffset, json.byteLength), tally: 'tally' in outcome ? outcome.tally : undefined };
    },
    close: async () => pool?.destroy(),
  };
}

// The weight of the newest interval in CompletionInterval's average: about the last ten tasks count.
const NEWEST_WEIGHT = 0.1;

/**
 * The time between two completions of a task queue while tasks waited, averaged over recent tasks:
 * the queue's rate, how long each task ahead holds a newcomer back. 0 until tasks have queued.
 */
class CompletionInterval {
  private lastCompletion = 0;
  private intervalMs = 0;

  ms(): number {
    return this.intervalMs;
  }

  /** Counts a task from its submission; call the function it returns once the task settles. */
  started(): () => void {
    const submitted = performance.now();
    return () => {
      const now = performance.now();
      // A task that found the pool idle says nothing of the pool's rate (and the first one
      // includes the thread's start): only one submitted before the last completion does.
      if (submitted < this.lastCompletion) {
        // One outlier (a collection, a thread restarted) moves the average by a bounded step.
        const interval = this.intervalMs === 0 ? now - this.lastCompletion : Math.min(now - this.lastCompletion, 4 * this.intervalMs);
        this.intervalMs = this.intervalMs === 0 ? interval : this.intervalMs + NEWEST_WEIGHT * (interval - this.intervalMs);
      }
      this.lastCompletion = now;
    };
  }
}

/** The body as a view of a buffer it alone uses, so that transferring it takes nothing else along. */
function ownBuffer(body: Buffer): Uint8Array {
  if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return body;
  return new Uint8Array(body);
}
