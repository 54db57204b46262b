import { move } from 'piscina';
import { JsonText, OPERATIONS, type OperationId } from '../operations/operation-table.js';
import type { Limits } from '../operations/field-rules.js';
import { parseJsonBody } from '../protocol/json-body.js';
import { ProblemError, problemOf, validationProblem, type Problem } from '../problem.js';
import { compileBodyValidator, type BodyValidator } from '../operations/validation.js';

/**
 * A worker thread of the offload pool (offload-pool.ts): it answers one large body at a time, from
 * its bytes to the bytes of the JSON answer, so that neither the parse, the operation nor the
 * serialization holds the event loop that answers small requests and probes.
 */

export interface OffloadTask {
  readonly operation: OperationId;
  /** The body; its buffer is transferred here, not copied. */
  readonly bytes: Uint8Array;
  readonly limits: Limits;
  readonly maxDepth: number;
}

export type OffloadOutcome = { readonly json: Uint8Array } | { readonly problem: Problem };

/** What the pool hands back: the answer's bytes (transferred), or the problem. */
export type PoolOutcome = Uint8Array | { readonly problem: Problem };

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
  return 'json' in outcome ? move(outcome.json) : outcome;
}
