import { setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { move, workerData } from 'piscina';
import { JsonText, OPERATIONS, type OperationId } from '../../operations/index.js';
import { ProblemError, type Problem } from '../../operations/problem.js';
import { runBody } from '../../engine/run.js';
import { answerBatch, type BatchLimits } from '../../engine/batch.js';
import type { Tally } from '../../engine/items.js';

/**
 * A worker thread of the offload pool (offload-pool.ts): it answers one large body at a time, from
 * its bytes to the bytes of the JSON answer, so that neither the parse, the operation nor the
 * serialization holds the event loop that answers small requests and probes.
 */

export interface OffloadTask {
  readonly operation: OperationId | 'batch';
  /** The body; its buffer is transferred here, not copied. */
  readonly bytes: Uint8Array;
  readonly limits: BatchLimits;
}

/** The answer's bytes (and for a batch, its operations by operation and status), or the problem. */
export type OffloadOutcome = { readonly json: Uint8Array; readonly tally?: Tally } | { readonly problem: Problem };

/** What the pool hands back: the answer's bytes (transferred), a batch's answer, or the problem. */
export type PoolOutcome = Uint8Array | OffloadOutcome;

const encoder = new TextEncoder();

/** What each thread is given once, as it starts (`workerData`). */
export interface PoolThreadData {
  readonly limits: BatchLimits;
  readonly niceness: number;
}
const threadData = workerData as PoolThreadData;

// A pool thread lowers its own CPU priority by POOL_THREAD_NICENESS. On Linux a thread's niceness
// is its own (setpriority(2), NOTES): when the pool shares a CPU with the event loop, the loop, which
// reads requests, admits or refuses them and answers probes, runs first, and the pool has the rest
// (docs/operations.md, "Past capacity"). In a pool thread only: the event loop's thread imports
// this module too (the memory measurement).
if (!isMainThread) {
  try {
    setPriority(threadData.niceness);
  } catch {
    // Where a thread may not change its own priority, it keeps the process's.
  }
}

/**
 * What the route would answer for this body, serialized; a refusal as its problem. Runs
 * anywhere; the worker threads call it, and so does the memory measurement.
 *
 * @example
 * answerBody({ operation: 'isEven', bytes: Buffer.from('{"input":4}'), limits }) //=> { json: <{"ret":true}> }
 */
export function answerBody(task: OffloadTask): OffloadOutcome {
  if (task.operation === 'batch') {
    try {
      const { text, tally } = answerBatch(task.bytes, task.limits);
      return { json: encoder.encode(text), tally };
    } catch (error) {
      if (error instanceof ProblemError) return { problem: error.problem };
      throw error;
    }
  }
  const outcome = runBody(OPERATIONS[task.operation], task.bytes, task.limits);
  if (!('result' in outcome)) return { problem: outcome.problem };
  // TextEncoder gives a buffer of its own, safe to transfer (Buffer.from may share a pool).
  return { json: encoder.encode(outcome.result instanceof JsonText ? outcome.result.text : JSON.stringify(outcome.result)) };
}

/** The pool's task: `null` only starts the thread (OffloadPool.warm). The limits came once, with the thread (`PoolThreadData`). */
export default function answerOffloaded(task: Omit<OffloadTask, 'limits'> | null): unknown {
  if (task === null) return null;
  const outcome = answerBody({ ...task, limits: threadData.limits });
  // A batch's answer comes with its tally, and is copied back with it.
  return 'json' in outcome && outcome.tally === undefined ? move(outcome.json) : outcome;
}
