import type { TSchema } from 'typebox';
import { CURRENT_OPERATION_IDS, OPERATIONS, type CurrentOperationId, type Operation } from '../operations/index.js';
import type { Limits } from '../operations/field-rules.js';
import { compileBodyValidator, type BodyValidator } from './validation.js';
import { fieldProblem, ProblemError, problemOf, type FieldError, type Problem } from '../operations/problem.js';
import { problemOutcome, runValue } from './run.js';
import { numberIn } from './json-text.js';

/**
 * One operation of a batch or of a stream (batch.ts, line-stream.ts): an object naming a current
 * operation in `operation`, beside exactly the fields its single endpoint's body has
 * (`{"operation":"isEven","input":4}`). It is validated by the same schema, with `operation` added,
 * and answered by the same `answer` of the operation table, so that nothing about an operation is
 * written twice.
 */

/** The answer to one operation: what its single endpoint answers with 200, or the problem it answers. */
export type ItemAnswer = { readonly status: 200; readonly result: object } | { readonly status: number; readonly problem: Problem };

const NAMES = CURRENT_OPERATION_IDS.map((id) => JSON.stringify(id)).join(', ');
const CURRENT: ReadonlySet<string> = new Set(CURRENT_OPERATION_IDS);

/**
 * The schema of one item for `id`: the body schema of its single endpoint with `operation` added.
 *
 * @example
 * itemSchema('isEven') // { type: 'object', properties: { operation: { const: 'isEven' }, input: ... }, required: ['operation', 'input'] }
 */
export function itemSchema(id: CurrentOperationId): TSchema {
  const declared = { ...OPERATIONS[id].body } as TSchema & {
    $id?: string;
    properties: Record<string, TSchema>;
    required?: string[];
    'x-examples'?: Record<string, { value: object }>;
  };
  // Its own `$id` (its name in the OpenAPI document) is the body's, not the item's.
  delete declared.$id;
  const { 'x-examples': examples, ...body } = declared;
  return {
    ...body,
    title: id,
    'x-expected': `an object with an "operation" field and the fields of ${id}`,
    properties: { operation: { const: id, description: 'The operation' }, ...body.properties },
    required: ['operation', ...(body.required ?? [])],
    examples: Object.values(examples ?? {}).map(({ value }) => ({ operation: id, ...value })),
  };
}

// Every field some operation's body has: the ones an item missing its `operation` names as unknown.
const KNOWN_FIELDS: ReadonlySet<string> = new Set(['operation', ...CURRENT_OPERATION_IDS.flatMap((id) => Object.keys(OPERATIONS[id].body.properties))]);

const validators = new Map<CurrentOperationId, BodyValidator>();
function validatorFor(id: CurrentOperationId): BodyValidator {
  let validate = validators.get(id);
  if (validate === undefined) validators.set(id, (validate = compileBodyValidator(itemSchema(id))));
  return validate;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The current operation an item names, or the problem of an item that names none. */
function operationOf(item: unknown): CurrentOperationId {
  if (!isObject(item)) throw fieldProblem('', `must be an object with an "operation" field (one of ${NAMES}) and that operation's fields`);
  const name = item.operation;
  if (name === undefined) {
    const unknown = Object.keys(item).filter((key) => !KNOWN_FIELDS.has(key));
    const beside = unknown.length === 0 ? '' : `; the item has ${unknown.slice(0, 5).map(preview).join(', ')}, not a field of any operation`;
    throw fieldProblem('/operation', `is required: it names the operation, one of ${NAMES}${beside}`);
  }
  if (typeof name !== 'string' || !CURRENT.has(name))
    throw fieldProblem('/operation', `must be one of ${NAMES}; ${preview(name)} is not an operation of this service`);
  return name as CurrentOperationId;
}

/**
 * The body field of the item's operation whose number is read from its source text (parity
 * decides from a number's text, never a rounded double), or undefined.
 *
 * @example
 * numberFieldOf({ operation: 'isEven', input: 9007199254740993 }) //=> 'input'
 * numberFieldOf({ operation: 'sort', input: [1] })                //=> undefined
 */
export function numberFieldOf(item: unknown): string | undefined {
  if (!isObject(item) || typeof item.operation !== 'string' || !CURRENT.has(item.operation)) return undefined;
  return (OPERATIONS[item.operation as CurrentOperationId] as Operation).numberField;
}

/** The number in the item's number field, whose source text its answer may need: none, or one. */
export function numbersToRead(item: unknown): number[] {
  return numberIn(item, numberFieldOf(item));
}

/**
 * Answers one item as its single endpoint would, with pointers rooted at the item. `numberSource`
 * is the source text of its number field (`numberFieldOf`), when it holds a number that JSON.parse
 * may have rounded.
 *
 * @example
 * answerItem({ operation: 'isOdd', input: 7 }, undefined, limits) //=> { status: 200, result: { ret: true } }
 */
export function answerItem(item: unknown, numberSource: string | undefined, limits: Limits): ItemAnswer {
  let id: CurrentOperationId;
  try {
    id = operationOf(item);
  } catch (error) {
    if (error instanceof ProblemError) return problemOutcome(error.problem);
    throw error;
  }
  // Only legacy operations answer JsonText, and no item names one. The item is its operation's body: the single endpoint's words.
  return runValue(OPERATIONS[id], item, numberSource, limits, validatorFor(id));
}

const BODY = 'The request body';

/**
 * A problem about an item, its pointers moved from the item to where the item is: `root` is the
 * item's pointer in the request (`/operations/3`; `''` for a line of a stream, which is its own
 * document). Its words stay the single endpoint's (a caller re-roots the pointers alone, and has
 * the single endpoint's problem), but for words about the item as a whole ("The request body"),
 * which name it as `named` (`/operations/3`, `The line`).
 *
 * @example
 * rootedAt(problemOf(400, '/input must be ...', [{ pointer: '/input', detail: '/input must be ...' }]), '/operations/3', '/operations/3')
 * //=> detail '/input must be ...', pointer '/operations/3/input'
 */
export function rootedAt(problem: Problem, root: string, named: string): Problem {
  const worded = (detail: string): string => (detail.startsWith(BODY) ? named + detail.slice(BODY.length) : detail);
  const errors: FieldError[] | undefined = problem.errors?.map(({ pointer, detail }) => ({
    pointer: root + pointer,
    detail: pointer === '' ? worded(detail) : detail,
  }));
  let detail = worded(problem.detail);
  if (problem.errors !== undefined && errors !== undefined && problem.detail === problem.errors.map((e) => e.detail).join('; ')) {
    detail = errors.map((e) => e.detail).join('; ');
  }
  return problemOf(problem.status, detail, errors);
}

/** An answer as one JSON text: `{"status":200,"result":…}` or `{"status":400,"problem":…}`. */
export function answerText(answer: ItemAnswer): string {
  return 'result' in answer
    ? `{"status":200,"result":${JSON.stringify(answer.result)}}`
    : `{"status":${answer.status},"problem":${JSON.stringify(answer.problem)}}`;
}

/**
 * Operations answered, by operation (`unknown` for an item naming none) and status, counted where
 * they are answered (a worker thread, the event loop) and added to `/metrics` and the span by the
 * request that carried them. Plain data: it comes back from a worker thread by structured clone.
 */
export type Tally = { [operation in CurrentOperationId | 'unknown']?: { [status: number]: number } };

/**
 * Counts one answer in a tally.
 *
 * @example
 * const tally: Tally = {}; count(tally, { operation: 'isEven' }, 200); // tally: { isEven: { 200: 1 } }
 */
export function count(tally: Tally, item: unknown, status: number): void {
  const name = isObject(item) && typeof item.operation === 'string' && CURRENT.has(item.operation) ? (item.operation as CurrentOperationId) : 'unknown';
  // Own properties only: `toString` is an operation, and a plain object inherits one.
  let byStatus = Object.hasOwn(tally, name) ? tally[name] : undefined;
  if (byStatus === undefined) tally[name] = byStatus = {};
  byStatus[status] = (byStatus[status] ?? 0) + 1;
}

/**
 * Each operation and status of a tally with how many were answered.
 *
 * @example
 * [...tallied({ isEven: { 200: 2, 400: 1 } })] //=> [['isEven', 200, 2], ['isEven', 400, 1]]
 */
export function* tallied(tally: Tally): Generator<[operation: CurrentOperationId | 'unknown', status: number, n: number]> {
  for (const operation of Object.keys(tally)) {
    const byStatus = tally[operation as CurrentOperationId] as { [status: number]: number };
    for (const status in byStatus) yield [operation as CurrentOperationId, Number(status), byStatus[status as unknown as number] as number];
  }
}
