import { Type } from 'typebox';
import { answerItem, answerText, count, numbersToRead, numberFieldOf, problemAnswer, rootedAt, type ItemAnswer, type Tally } from './items.js';
import type { Limits } from '../operations/field-rules.js';
import { compileBodyValidator } from './validation.js';
import { BYTE, countAtMost, decodeUtf8Body, parseJsonText, pointerOfKey, withNumberSources } from './json-text.js';
import { EXPECTED, fieldProblem, problemOf, ProblemError, validationProblem } from '../operations/problem.js';
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
export const BatchEnvelopeSchema = Type.Object(
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
 * //=> '{"answers":[{"status":200,"result":{"ret":true}},{"status":400,"problem":{… "/operations/1/input …"}}]}'
 */
export function answerBatch(bytes: Uint8Array, limits: BatchLimits): BatchAnswer {
  let text = decodeUtf8Body(bytes, 'a JSON object with an "operations" array');
  // An item nesting deeper than MAX_DEPTH is that item's problem alone: it is cut out of the text
  // before JSON.parse would build it (a batch of `[` would take seconds and hundreds of MB).
  // An item's body is as deep in the batch as the levels above it (the batch object, `operations`).
  const tooDeep = deepItems(bytes, 1 + ITEM_DEPTH + limits.maxDepth);
  if (tooDeep.ranges.length > 0) text = withRangesBlanked(bytes, tooDeep.ranges);
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
    const deep = tooDeep.items.get(index);
    let answer = deep === undefined ? answerItem(item, sources?.get(item as object), limits) : tooDeepAnswer(deep, limits.maxDepth);
    if ('problem' in answer) answer = problemAnswer(rootedAt(answer.problem, root, root));
    count(tally, item, answer.status);
    return answerText(answer);
  });
  return { text: `{"answers":[${answers.join(',')}]}`, tally };
}

// The levels above an item: the batch object and its `operations` array.
const ITEM_DEPTH = 2;

/** What the single endpoint answers a body nesting too deep at `pointer` (protocol/json-body.ts). */
function tooDeepAnswer(pointer: string, maxDepth: number): ItemAnswer {
  const problem = fieldProblem(pointer, LIMIT_TEXTS.depth(maxDepth), 413);
  return problemAnswer(problemOf(413, problem.message, problem.errors));
}

function isBatch(body: unknown): body is { operations: unknown[] } {
  return typeof body === 'object' && body !== null && Array.isArray((body as { operations?: unknown }).operations);
}

const { QUOTE, BACKSLASH, COMMA, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET } = BYTE;
const OPERATIONS_KEY = Buffer.from('"operations"');

interface DeepItems {
  /** Byte ranges of the values that nest too deep, to be blanked before parsing. */
  readonly ranges: Array<readonly [number, number]>;
  /** By index in the (last) `operations` array, the items among them: the pointer of the member that nests too deep, in the item. */
  readonly items: Map<number, string>;
}

/**
 * The items of the batch's `operations` array that nest deeper than `limit` (counted from the
 * batch object), with the member of each that does, and any other top-level member that does.
 * Works on the bytes, valid JSON or not; brackets inside strings do not count. One native count
 * decides most batches of few objects.
 */
function deepItems(bytes: Uint8Array, limit: number): DeepItems {
  const found: DeepItems = { ranges: [], items: new Map() };
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (countAtMost(buffer, OPEN_BRACKET, limit) + countAtMost(buffer, OPEN_BRACE, limit) <= limit) return found;

  let depth = 0;
  let inOperations = false; // inside the value of a top-level "operations" member
  let index = 0; // the item of `operations` being read
  let start = -1; // where the current item (or other top-level member's value) began
  let marked = false;
  let expectKey = false; // the next string is a key of an item object
  let key: [number, number] = [-1, -1]; // the item member being read
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const from = i;
      for (i++; i < bytes.length && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      if (depth === 1) inOperations = buffer.compare(OPERATIONS_KEY, 0, OPERATIONS_KEY.length, from, i + 1) === 0;
      else if (expectKey) [key, expectKey] = [[from, i + 1], false];
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      const top = inOperations ? depth === 3 : depth === 2;
      if (top) [start, marked, key, expectKey] = [i, false, [-1, -1], inOperations && c === OPEN_BRACE];
      if (depth > limit && !marked && start >= 0) {
        marked = true;
        if (inOperations) found.items.set(index, key[0] < 0 ? '' : pointerOfKey(buffer.toString('utf8', key[0], key[1])));
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (marked && (inOperations ? depth === 3 : depth === 2)) {
        found.ranges.push([start, i + 1]);
        marked = false;
      }
      depth--;
    } else if (c === COMMA) {
      if (depth === 2 && inOperations) index++;
      else if (depth === 3 && inOperations) expectKey = true;
    }
  }
  if (marked) found.ranges.push([start, bytes.length]);
  return found;
}

/** The text of `bytes` with each range replaced by `{}`: an item that is only its problem. */
function withRangesBlanked(bytes: Uint8Array, ranges: ReadonlyArray<readonly [number, number]>): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of ranges) {
    parts.push(buffer.toString('utf8', from, start), '{}');
    from = end;
  }
  parts.push(buffer.toString('utf8', from));
  return parts.join('');
}
