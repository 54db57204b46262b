import { Type } from 'typebox';
import { answerItem, answerText, count, numbersToRead, numberFieldOf, rootedAt, type ItemAnswer, type Tally } from './items.js';
import type { Limits } from '../operations/field-rules.js';
import { problemOutcome } from './run.js';
import { compileBodyValidator } from './validation.js';
import { decodeUtf8Body, deepValues, parseJsonText, withNumberSources, type DeepValue } from './json-text.js';
import { EXPECTED, fieldProblem, ProblemError, validationProblem } from '../operations/problem.js';
import { LIMIT_TEXTS } from '../operations/limit-texts.js';

/**
 * The JSON batch (`POST /api/batch`): `{"operations":[item, …]}` in, `{"answers":[answer, …]}`
 * out, in order, each item answered as its single endpoint would answer it (items.ts). Only
 * a batch that is itself wrong (not JSON, no `operations` array, more than BATCH_MAX_OPERATIONS)
 * is refused as a whole; a bad item gets its problem in its place and the others their answers.
 * Framework-free: the route answers small batches with it, the worker threads large ones.
 */

export interface BatchLimits extends Limits {
  readonly maxDepth: number;
  readonly batchMaxOperations: number;
}

/** What the validator checks of a batch as a whole; each item is checked on its own. */
const BatchEnvelopeSchema = Type.Object(
  { operations: Type.Array(Type.Unknown(), { [EXPECTED]: 'an array of operations' }) },
  { [EXPECTED]: 'a JSON object with an "operations" array' },
);
const validateEnvelope = compileBodyValidator(BatchEnvelopeSchema);

export interface BatchAnswer {
  /** The JSON text of the 200 answer. */
  readonly text: string;
  readonly tally: Tally;
}

/**
 * Answers a batch body from its bytes. Throws a `ProblemError` (400, 413) for a batch that is
 * wrong as a whole.
 *
 * @example
 * answerBatch(Buffer.from('{"operations":[{"operation":"isEven","input":4},{"operation":"isOdd","input":"x"}]}'), limits).text
 * //=> '{"answers":[{"status":200,"result":{"ret":true}},{"status":400,"problem":{… "errors":[{"pointer":"/operations/1/input","detail":"/input must be …"}]}}]}'
 */
export function answerBatch(bytes: Uint8Array, limits: BatchLimits): BatchAnswer {
  let text = decodeUtf8Body(bytes, 'a JSON object with an "operations" array');
  // An item nesting deeper than MAX_DEPTH is that item's problem alone: it is cut out of the text
  // before JSON.parse would build it (a batch of `[` would take seconds and hundreds of MB).
  // An item's body is as deep in the batch as the levels above it (the batch object, `operations`).
  const tooDeep = deepValues(bytes, 1 + ITEM_DEPTH + limits.maxDepth, OPERATIONS_KEY);
  if (tooDeep.length > 0) text = withValuesBlanked(bytes, tooDeep);
  const tooDeepItems = new Map(tooDeep.filter((value) => value.index !== undefined).map((value) => [value.index, value.pointer]));
  const { value: body, sources } = withNumberSources(
    text,
    parseJsonText(text, undefined),
    (batch) => (isBatch(batch) ? batch.operations.flatMap(numbersToRead) : []),
    numberFieldOf,
  );
  if (!validateEnvelope(body)) {
    const problem = validationProblem(validateEnvelope.errors ?? []);
    throw new ProblemError(400, problem.detail, problem.errors);
  }
  const { operations } = body as { operations: unknown[] };
  if (operations.length > limits.batchMaxOperations) {
    throw fieldProblem('/operations', LIMIT_TEXTS.batchOperations(operations.length, limits.batchMaxOperations), 413);
  }
  const tally: Tally = {};
  const answers = operations.map((item, index): string => {
    const root = `/operations/${index}`;
    const deep = tooDeepItems.get(index);
    let answer = deep === undefined ? answerItem(item, sources?.get(item as object), limits) : tooDeepAnswer(deep, limits.maxDepth);
    if ('problem' in answer) answer = problemOutcome(rootedAt(answer.problem, root, root));
    count(tally, item, answer.status);
    return answerText(answer);
  });
  return { text: `{"answers":[${answers.join(',')}]}`, tally };
}

// The levels above an item: the batch object and its `operations` array.
const ITEM_DEPTH = 2;

/** What the single endpoint answers a body nesting too deep at `pointer` (protocol/json-body.ts). */
function tooDeepAnswer(pointer: string, maxDepth: number): ItemAnswer {
  return problemOutcome(fieldProblem(pointer, LIMIT_TEXTS.depth(maxDepth), 413).problem);
}

function isBatch(body: unknown): body is { operations: unknown[] } {
  return typeof body === 'object' && body !== null && Array.isArray((body as { operations?: unknown }).operations);
}

const OPERATIONS_KEY = Buffer.from('"operations"');

/** The text of `bytes` with each of these values replaced by `{}`: an item that is only its problem. */
function withValuesBlanked(bytes: Uint8Array, values: readonly DeepValue[]): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const parts: string[] = [];
  let from = 0;
  for (const { start, end } of values) {
    parts.push(buffer.toString('utf8', from, start), '{}');
    from = end;
  }
  parts.push(buffer.toString('utf8', from));
  return parts.join('');
}
