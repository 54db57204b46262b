import { Type, type Static, type TSchema } from 'typebox';
import { EXPECTED } from './problem.js';
import type { Limits } from './field-rules.js';

/**
 * What an operation is, declared once in its own file (sort.ts, parity.ts, ...): its path, docs,
 * body and result schemas, the errors it can answer, its memory factor, its earlier-revision form
 * and what it answers. The index (index.ts) lists them; the engine runs them (engine/run.ts);
 * routes, the OpenAPI document, the client's types, the CLI, the batch, the stream, the worker
 * threads and the memory estimates read them. `x-expected` in a schema gives the words an error
 * detail uses for what a field accepts; `x-examples` become the OpenAPI document's request examples.
 */

/** An answer already written as JSON text (the legacy parity answers keep a number's every digit). */
export class JsonText {
  constructor(readonly text: string) {}
}

const BOOLEAN_ANSWERS = [new JsonText('{"ret":false}'), new JsonText('{"ret":true}')] as const;

/**
 * A path form's boolean answer as its JSON text, made once: a GET answers one of two texts, and
 * needs no serializing (http/protocol/caching.ts hashes each once).
 *
 * @example
 * booleanAnswer(true).text //=> '{"ret":true}'
 */
export const booleanAnswer = (ret: boolean): JsonText => BOOLEAN_ANSWERS[ret ? 1 : 0];

interface AnswerContext {
  readonly limits: Limits;
  /** The JSON source text of the operation's `numberField`, when that member was a number. */
  readonly numberSource: string | undefined;
}

/** Where the current operations live unless `buildApp` is given another prefix; the legacy ones are at the root. */
export const DEFAULT_PREFIX = '/api';

/**
 * Where an operation's POST form is served: under `prefix` for a current operation, at the root for a legacy one.
 *
 * @example
 * servedAt(OPERATIONS.sort) //=> '/api/sort'; servedAt(OPERATIONS.legacySort) //=> '/sort'
 */
export function servedAt(operation: Pick<Operation, 'path' | 'legacy'>, prefix: string = DEFAULT_PREFIX): string {
  return operation.legacy === undefined ? `${prefix}${operation.path}` : operation.path;
}

/** The OpenAPI tags and their descriptions, in the document's order; `batch` is the batch and the stream. */
export const TAG_DESCRIPTIONS = {
  sort: 'Sort an array',
  parity: 'isEven and isOdd, exact at any magnitude',
  isNumber: 'Whether a value is a number',
  toString: 'RFC 8785 canonical string form',
  stringSplit: 'Split a string by a literal separator or into graphemes',
  batch: 'Many operations in one request: a JSON batch, or an NDJSON stream answered line by line',
  legacy: 'The earlier revision at the root, still served but deprecated: see each route for its successor',
} as const;
type Tag = keyof typeof TAG_DESCRIPTIONS;

/** The earlier revision's form of an operation (docs/behaviour.md §4), and the migration table of docs/earlier-revision.md. */
export interface LegacyForm {
  /** The current operation that replaces it. */
  readonly successor: string;
  readonly request: string;
  readonly response: string;
  readonly successorRequest: string;
  readonly successorResponse: string;
}

/** `GET <path>/:number`: the operation applied to a percent-decoded path segment. */
export interface PathForm {
  readonly summary: string;
  readonly description: string;
  readonly errors: readonly number[];
  /** The pattern the path value must match, as the document gives it; `answer` checks it (its 400 names what is wrong). */
  readonly pattern?: string;
  readonly answer: (text: string, limits: Limits) => JsonText;
}

export interface Operation<S extends TSchema = TSchema, R extends TSchema = TSchema> {
  /** `POST` path: under the prefix for a current operation, at the root for a legacy one. */
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly tag: Tag;
  /** The request body; its `x-examples` are the document's request examples. */
  readonly body: S;
  readonly result: R;
  readonly resultDescription: string;
  /** The problem statuses the POST form can answer (http/operations/schemas.ts describes each). */
  readonly errors: readonly number[];
  /** Results of any size (arrays, long strings): written by JSON.stringify, not a schema serializer. */
  readonly largeResult?: boolean;
  /** A body member whose number must be read from its source text, not a rounded double. */
  readonly numberField?: string;
  /**
   * Peak memory of answering a body, per byte of body: measured by `npm run measure:memory` on the
   * operation's costliest bodies (scripts/memory-shapes.ts) from 1 to 16 MiB and rounded up;
   * test/memory-estimates.test.ts checks that no measured peak is above its estimate.
   */
  readonly memory: number;
  readonly answer: (body: Static<S>, context: AnswerContext) => Static<R> | JsonText;
  readonly byPath?: PathForm;
  readonly legacy?: LegacyForm;
}

/**
 * An operation, typed by its schemas: `answer` takes the body its schema validates and gives
 * the result its schema describes.
 *
 * @example
 * export const isNumber = defineOperation({ path: '/isNumber', body: AnyInputBodySchema, result: BooleanResultSchema, answer: ({ input }) => ({ ret: isNumber(input) }), ... });
 */
export function defineOperation<S extends TSchema, R extends TSchema>(
  definition: Operation<S, R> & { readonly byPath: PathForm },
): Operation<S, R> & { readonly byPath: PathForm };
export function defineOperation<S extends TSchema, R extends TSchema>(
  definition: Operation<S, R> & { readonly byPath?: undefined },
): Operation<S, R> & { readonly byPath?: undefined };
// Two forms so that the type keeps whether there is a `byPath`: the client has a GET method only where there is one.
export function defineOperation(definition: Operation): Operation {
  return definition;
}

/** The problem statuses of a body operation, and of a path form. */
export const BODY_ERRORS = [400, 405, 408, 413, 415, 429, 431, 500, 503];
export const PATH_ERRORS = [400, 405, 408, 414, 429, 431, 500, 503];

export const JSON_OBJECT_BODY = 'a JSON object with an "input" field';
export const example = (summary: string, value: unknown) => ({ summary, value });

export const BooleanResultSchema = Type.Object({ ret: Type.Boolean() }, { $id: 'BooleanResult', examples: [{ ret: true }] });
export const StringResultSchema = Type.Object({ ret: Type.String() }, { $id: 'StringResult', examples: [{ ret: '{"a":"é","b":[1,true]}' }] });

/** `{ "input": any JSON value }`: isNumber and toString. */
export const AnyInputBodySchema = Type.Object(
  { input: Type.Unknown({ [EXPECTED]: 'any JSON value', description: 'Any JSON value' }) },
  {
    $id: 'AnyInputRequest',
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      number: example('A number', { input: 1e21 }),
      string: example('A string', { input: ' -1.5e3 ' }),
      object: example('An object', { input: { b: [1.0, true], a: 'é' } }),
    },
  },
);

/** A value shortened for an error's words. */
export function preview(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
