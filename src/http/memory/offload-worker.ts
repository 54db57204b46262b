import { move } from 'piscina';
import { JsonText, OPERATIONS, type OperationId } from '../operations/operation-table.js';
import { parseJsonBody } from '../protocol/json-body.js';
import { ProblemError, problemOf, validationProblem, type Problem } from '../problem.js';
import { compileBodyValidator, type BodyValidator } from '../operations/validation.js';
import { answerBatch, type BatchLimits } from '../operations/batch.js';
import type { Tally } from '../operations/batch-items.js';

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
  readonly maxDepth: number;
}

/** The answer's bytes (and for a batch, its operations by operation and status), or the problem. */
export type OffloadOutcome = { readonly json: Uint8Array; readonly tally?: Tally } | { readonly problem: Problem };

/** What the pool hands back: the answer's bytes (transferred), a batch's answer, or the problem. */
export type PoolOutcome = Uint8Array | OffloadOutcome;

const validators = new Map<OperationId, BodyValidator>();

function validatorFor(operation: OperationId): BodyValidator {
  let validate = validators.get(operation);
  if (validate === undefined) {
    validate = compileBodyValidator(OPERATIONS[operation].body);
    validators.set(operation, validate);
  }
  return validate;
}

const encoder = new TextEncoder();

/**
 * What the route would answer for this body: parse, validate, answer, serialize; a refusal as
 * its problem. Runs anywhere; the worker threads call it, and so does the memory measurement.
 */
export function answerBody(task: OffloadTask): OffloadOutcome {
  if (task.operation === 'batch') {
    try {
      const { text, tally } = answerBatch(task.bytes, task.limits);
      return { json: encoder.encode(text), tally };
    } catch (error) {
      if (error instanceof ProblemError) return { problem: problemOf(error.status, error.message, error.errors) };
      throw error;
    }
  }
  const definition = OPERATIONS[task.operation];
  try {
    const { body, numberSource } = parseJsonBody(task.bytes, task.maxDepth, definition.numberField);
    const validate = validatorFor(task.operation);
    if (!validate(body)) return { problem: validationProblem(validate.errors ?? []) };
    const answer = (definition.answer as (body: unknown, context: object) => object | JsonText)(body, { limits: task.limits, numberSource });
    // TextEncoder gives a buffer of its own, safe to transfer (Buffer.from may share a pool).
    return { json: encoder.encode(answer instanceof JsonText ? answer.text : JSON.stringify(answer)) };
  } catch (error) {
    if (error instanceof ProblemError) return { problem: problemOf(error.status, error.message, error.errors) };
    throw error;
  }
}

/** The pool's task: `null` only starts the thread (OffloadPool.warm). */
export default function answerOffloaded(task: OffloadTask | null): unknown {
  if (task === null) return null;
  const outcome = answerBody(task);
  // A batch's answer comes with its tally, and is copied back with it.
  return 'json' in outcome && outcome.tally === undefined ? move(outcome.json) : outcome;
}
