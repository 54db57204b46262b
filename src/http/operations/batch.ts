import { Type } from 'typebox';
import { answerItem, answerText, count, numberFieldToRead, problemAnswer, rootedAt, type ItemAnswer, type Tally } from './batch-items.js';
import type { Limits } from './field-rules.js';
import { compileBodyValidator } from './validation.js';
import { decodeUtf8Body, parseJsonText } from '../protocol/json-body.js';
import { EXPECTED, fieldProblem, problemOf, ProblemError, validationProblem } from '../problem.js';
import { LIMIT_TEXTS } from '../limit-texts.js';

/**
 * The JSON batch (`POST /api/batch`): `{"operations":[item, …]}` in, `{"answers":[answer, …]}`
 * out, in order, each item answered as its single endpoint would answer it (batch-items.ts). Only
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
  let body = parseJsonText(text, undefined);
  // A parity number JSON.parse has rounded is read again from its source text (rare: the batch is parsed twice).
  let sources: Map<object, string> | undefined;
  if (isBatch(body) && body.operations.some((item) => numberFieldToRead(item) !== undefined)) [body, sources] = withNumberSources(text);
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
    let answer: ItemAnswer = tooDeep.items.has(index)
      ? problemAnswer(
          problemOf(413, `${root} ${LIMIT_TEXTS.depth(limits.maxDepth)}`, [{ pointer: root, detail: `${root} ${LIMIT_TEXTS.depth(limits.maxDepth)}` }]),
        )
      : answerItem(item, sources?.get(item as object), limits);
    if ('problem' in answer && !tooDeep.items.has(index)) answer = problemAnswer(rootedAt(answer.problem, root, root));
    count(tally, item, answer.status);
    return answerText(answer);
  });
  return { text: `{"answers":[${answers.join(',')}]}`, tally };
}

// The levels above an item: the batch object and its `operations` array.
const ITEM_DEPTH = 2;

function isBatch(body: unknown): body is { operations: unknown[] } {
  return typeof body === 'object' && body !== null && Array.isArray((body as { operations?: unknown }).operations);
}

/** The batch parsed again, with each object holding a parity number that JSON.parse rounds, and the number's source text. */
function withNumberSources(text: string): [unknown, Map<object, string>] {
  const sources = new Map<object, string>();
  // The reviver's third argument (JSON.parse source text access, V8 11.4; every Node.js this runs on).
  const body = JSON.parse(text, function (this: object, key: string, value: unknown, context?: { source?: string }) {
    const rounded = typeof value === 'number' && !Number.isSafeInteger(value);
    if (rounded && context?.source !== undefined && key === numberFieldToRead({ ...this, [key]: value })) sources.set(this, context.source);
    return value;
  } as (key: string, value: unknown) => unknown) as unknown;
  return [body, sources];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPERATIONS_KEY = Buffer.from('"operations"');

interface DeepItems {
  /** Byte ranges of the values that nest too deep, to be blanked before parsing. */
  readonly ranges: Array<readonly [number, number]>;
  /** The indexes in the (last) `operations` array of the items among them. */
  readonly items: Set<number>;
}

/**
 * The items of the batch's `operations` array that nest deeper than `limit` (counted from the
 * batch object), and any other top-level member that does. Works on the bytes, valid JSON or not;
 * brackets inside strings do not count. One native count decides most batches of few objects.
 */
function deepItems(bytes: Uint8Array, limit: number): DeepItems {
  const found: DeepItems = { ranges: [], items: new Set() };
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let openers = 0;
  for (let at = buffer.indexOf(OPEN_BRACKET); at !== -1 && openers <= limit; at = buffer.indexOf(OPEN_BRACKET, at + 1)) openers++;
  for (let at = buffer.indexOf(OPEN_BRACE); at !== -1 && openers <= limit; at = buffer.indexOf(OPEN_BRACE, at + 1)) openers++;
  if (openers <= limit) return found;

  let depth = 0;
  let inOperations = false; // inside the value of a top-level "operations" member
  let index = 0; // the item of `operations` being read
  let start = -1; // where the current item (or other top-level member's value) began
  let marked = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const keyStart = i;
      for (i++; i < bytes.length && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      if (depth === 1 && buffer.compare(OPERATIONS_KEY, 0, OPERATIONS_KEY.length, keyStart, i + 1) === 0) [inOperations, index] = [true, 0];
      else if (depth === 1) inOperations = false;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if ((depth === 3 && inOperations) || (depth === 2 && !inOperations)) [start, marked] = [i, false];
      if (depth > limit && !marked && start >= 0) {
        marked = true;
        if (inOperations) found.items.add(index);
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (marked && ((depth === 3 && inOperations) || (depth === 2 && !inOperations))) {
        found.ranges.push([start, i + 1]);
        marked = false;
      }
      depth--;
    } else if (c === COMMA && depth === 2 && inOperations) {
      index++;
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
