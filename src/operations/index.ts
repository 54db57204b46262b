import type { Static, TSchema } from 'typebox';
import { collatorFor, InputError, isNumber, LimitError, stringSplit } from '../core/index.js';
import { numberTextTooLong, PARITY, parityOrProblem, sortedOrProblem, stringFormOrProblem, type Limits, type ParityName } from './field-rules.js';
import { LIMIT_TEXTS } from './limit-texts.js';
import { fieldProblem, fromCore, ProblemError } from './problem.js';
import {
  AnyInputBodySchema,
  BODY_ERRORS,
  BooleanResultSchema,
  LegacyParityBodySchema,
  legacyParityResultSchema,
  LegacySortBodySchema,
  LegacyToStringBodySchema,
  ParityBodySchema,
  PATH_ERRORS,
  SortBodySchema,
  SortResponseSchema,
  StringListResultSchema,
  StringResultSchema,
  StringSplitBodySchema,
} from '../http/operations/schemas.js';

/**
 * Every operation, declared once: its path, documentation, body and result schemas, the errors it
 * can answer, its memory profile and what it answers. The routes (routes.ts, legacy-routes.ts), the
 * OpenAPI document and through it the generated client, the worker threads that answer large
 * bodies (offload-worker.ts) and the memory estimates all read this table; the CLI has one command
 * per current operation (cli-commands.ts), and test/operations-everywhere.test.ts checks that
 * every operation is in each of them. README, "Adding an operation", lists the steps.
 */

/** An answer already written as JSON text (the legacy parity answers keep a number's every digit). */
export class JsonText {
  constructor(readonly text: string) {}
}

export interface AnswerContext {
  readonly limits: Limits;
  /** The JSON source text of the operation's `numberField`, when that member was a number. */
  readonly numberSource: string | undefined;
}

/** Which row of `PEAK_BYTES_PER_BODY_BYTE` (estimates.ts) an operation's memory follows. */
export type MemoryProfile = 'sort' | 'parity' | 'isNumber' | 'toString' | 'stringSplit';

/** The OpenAPI tags and their descriptions, in the document's order; `batch` is the batch and the stream (batch-routes.ts). */
export const TAG_DESCRIPTIONS = {
  sort: 'Sort an array',
  parity: 'isEven and isOdd, exact at any magnitude',
  isNumber: 'Whether a value is a number',
  toString: 'RFC 8785 canonical string form',
  stringSplit: 'Split a string by a literal separator or into graphemes',
  batch: 'Many operations in one request: a JSON batch, or an NDJSON stream answered line by line',
  legacy: 'The earlier revision at the root, still served but deprecated: see each route for its successor',
} as const;
export type Tag = keyof typeof TAG_DESCRIPTIONS;

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
  readonly answer: (text: string, limits: Limits) => object;
}

export interface Operation<S extends TSchema = TSchema> {
  /** `POST` path: under the prefix for a current operation, at the root for a legacy one. */
  readonly path: string;
  readonly summary: string;
  readonly description: string;
  readonly tag: Tag;
  /** The request body; its `x-examples` are the document's request examples. */
  readonly body: S;
  readonly result: TSchema;
  readonly resultDescription: string;
  /** The problem statuses the POST form can answer (schemas.ts describes each). */
  readonly errors: readonly number[];
  /** Results of any size (arrays, long strings): written by JSON.stringify, not a schema serializer. */
  readonly largeResult?: boolean;
  /** A body member whose number must be read from its source text, not a rounded double. */
  readonly numberField?: string;
  readonly memory: MemoryProfile;
  readonly answer: (body: Static<S>, context: AnswerContext) => object | JsonText;
  readonly byPath?: PathForm;
  readonly legacy?: LegacyForm;
}

const operation = <S extends TSchema>(definition: Operation<S>): Operation<S> => definition;

const WORD: Readonly<Record<ParityName, string>> = { isEven: 'even', isOdd: 'odd' };

/** A number in a path segment, for parity: its length first, then the core rule, errors naming the value. */
function parityOfPathValue(name: ParityName) {
  return (text: string, limits: Limits): object => {
    const tooLong = numberTextTooLong(text, limits);
    if (tooLong !== undefined) throw new ProblemError(400, `The path value ${tooLong}`);
    try {
      return { ret: PARITY[name](text) };
    } catch (error) {
      if (error instanceof InputError) throw new ProblemError(400, `The path value ${JSON.stringify(preview(text))} ${error.message}`);
      throw error;
    }
  };
}

function preview(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

const parity = (name: ParityName) =>
  operation({
    path: `/${name}`,
    summary: `Tell whether a number is ${WORD[name]}`,
    description: `Exact at any magnitude: decided from the number's JSON text, never a rounded double. The value must be an integer.`,
    tag: 'parity',
    body: ParityBodySchema,
    result: BooleanResultSchema,
    resultDescription: `\`ret\` is true when the number is ${WORD[name]}`,
    errors: BODY_ERRORS,
    numberField: 'input',
    memory: 'parity',
    answer: ({ input }, { limits, numberSource }) => ({ ret: parityOrProblem(name, input, numberSource, '/input', limits) }),
    byPath: {
      summary: `Tell whether the number in the path is ${WORD[name]}`,
      description: 'The same rule as the POST form, applied to the percent-decoded path segment.',
      errors: PATH_ERRORS,
      answer: parityOfPathValue(name),
    },
  });

const legacyParity = (name: ParityName, path: string) =>
  operation({
    path,
    summary: `Tell whether a number is ${WORD[name]} (earlier revision)`,
    description: 'Earlier revision, still served.',
    tag: 'legacy',
    body: LegacyParityBodySchema,
    result: legacyParityResultSchema(name),
    resultDescription: 'The number as sent, and the answer',
    errors: BODY_ERRORS,
    numberField: 'number',
    memory: 'parity',
    answer: ({ number }, { limits, numberSource }) => {
      const answer = parityOrProblem(name, number, numberSource, '/number', limits);
      // Written by hand so that a JSON number comes back with every digit it was sent with.
      const echoed = typeof number === 'number' && numberSource !== undefined ? numberSource : JSON.stringify(number);
      return new JsonText(`{"number":${echoed},"${name}":${answer}}`);
    },
    legacy: {
      successor: `/api/${name}`,
      request: '{"number": n}',
      response: `{"number": n, "${name}": boolean}`,
      successorRequest: '{"input": n}',
      successorResponse: '{"ret": boolean}',
    },
  });

export const OPERATIONS = {
  sort: operation({
    path: '/sort',
    summary: 'Sort an array',
    description:
      'Numbers in numeric order, strings in Unicode code point order (or by `locale`), mixed types by one total order: ' +
      '`null < false < true < numbers < strings < arrays < objects`. Stable; duplicates kept.',
    tag: 'sort',
    body: SortBodySchema,
    result: SortResponseSchema,
    resultDescription: 'The sorted array',
    errors: BODY_ERRORS,
    largeResult: true,
    memory: 'sort',
    answer: ({ input, order, locale }, { limits }) => {
      if (locale !== undefined) fromCore('/locale', () => collatorFor(locale));
      return { sortedArray: sortedOrProblem(input, '/input', limits, { order, locale }) };
    },
  }),
  isEven: parity('isEven'),
  isOdd: parity('isOdd'),
  isNumber: operation({
    path: '/isNumber',
    summary: 'Tell whether a value is a number',
    description:
      'True for any JSON number and for a string that, trimmed, is written in JavaScript numeric notation ' +
      '(`"12"`, `" -1.5e3 "`, `".5"`, `"0x1F"`, `"1e400"`); false for everything else.',
    tag: 'isNumber',
    body: AnyInputBodySchema,
    result: BooleanResultSchema,
    resultDescription: '`ret` is true when the value is a number',
    errors: BODY_ERRORS,
    memory: 'isNumber',
    answer: ({ input }) => ({ ret: isNumber(input) }),
    byPath: {
      summary: 'Tell whether the path segment is a number',
      description: 'The string rule of the POST form, applied to the percent-decoded path segment.',
      errors: PATH_ERRORS,
      answer: (text) => ({ ret: isNumber(text) }),
    },
  }),
  toString: operation({
    path: '/toString',
    summary: 'Convert a value to its string form',
    description: 'A string comes back unchanged; any other value as its RFC 8785 canonical JSON text.',
    tag: 'toString',
    body: AnyInputBodySchema,
    result: StringResultSchema,
    resultDescription: '`ret` is the string form',
    errors: BODY_ERRORS,
    largeResult: true,
    memory: 'toString',
    answer: ({ input }) => ({ ret: stringFormOrProblem(input, '/input') }),
  }),
  stringSplit: operation({
    path: '/stringSplit',
    summary: 'Split a string',
    description:
      'Splits `input.string` at each occurrence of the literal `input.seperator` (alias `separator`). ' +
      'No separator gives `[string]`; `""` gives user-perceived characters (grapheme clusters).',
    tag: 'stringSplit',
    body: StringSplitBodySchema,
    result: StringListResultSchema,
    resultDescription: '`ret` is the list of parts',
    errors: BODY_ERRORS,
    largeResult: true,
    memory: 'stringSplit',
    answer: ({ input: { string, seperator, separator } }, { limits }) => {
      if (seperator !== undefined && separator !== undefined && seperator !== separator) {
        throw fieldProblem('/input/separator', 'differs from /input/seperator; send one of them, or both equal');
      }
      try {
        return { ret: stringSplit(string, seperator ?? separator, { maxParts: limits.stringSplitMaxParts }) };
      } catch (error) {
        if (error instanceof LimitError) throw fieldProblem('/input/string', LIMIT_TEXTS.splitParts(error.message, limits.stringSplitMaxParts), 413);
        throw error;
      }
    },
  }),
  legacySort: operation({
    path: '/sort',
    summary: 'Sort an array (earlier revision)',
    description: 'Earlier revision, still served.',
    tag: 'legacy',
    body: LegacySortBodySchema,
    result: SortResponseSchema,
    resultDescription: 'The sorted array',
    errors: BODY_ERRORS,
    largeResult: true,
    memory: 'sort',
    answer: ({ array }, { limits }) => ({ sortedArray: sortedOrProblem(array, '/array', limits) }),
    legacy: {
      successor: '/api/sort',
      request: '{"array": [...]}',
      response: '{"sortedArray": [...]}',
      successorRequest: '{"input": [...]}',
      successorResponse: '{"sortedArray": [...]}',
    },
  }),
  legacyIsOdd: legacyParity('isOdd', '/is-odd'),
  legacyIsEven: legacyParity('isEven', '/is-even'),
  legacyToString: operation({
    path: '/toString',
    summary: 'Convert a value to its string form (earlier revision)',
    description: 'Earlier revision, still served.',
    tag: 'legacy',
    body: LegacyToStringBodySchema,
    result: StringResultSchema,
    resultDescription: '`ret` is the string form',
    errors: BODY_ERRORS,
    largeResult: true,
    memory: 'toString',
    answer: ({ number }) => ({ ret: stringFormOrProblem(number, '/number') }),
    legacy: {
      successor: '/api/toString',
      request: '{"number": value}',
      response: '{"ret": string}',
      successorRequest: '{"input": value}',
      successorResponse: '{"ret": string}',
    },
  }),
} as const;

export type OperationId = keyof typeof OPERATIONS;
/** The operations of the current contract; the earlier revision's are named `legacy…` (and have a `legacy` form). */
export type CurrentOperationId = Exclude<OperationId, `legacy${string}`>;

const ids = Object.keys(OPERATIONS) as OperationId[];
/** The current operations, in the table's order. */
export const CURRENT_OPERATION_IDS = ids.filter((id): id is CurrentOperationId => OPERATIONS[id].legacy === undefined);
/** The OpenAPI tags with their descriptions, in the order of TAG_DESCRIPTIONS. */
export const TAGS = Object.entries(TAG_DESCRIPTIONS).map(([name, description]) => ({ name, description }));
/** The earlier revision's operations, in the table's order. */
export const LEGACY_OPERATION_IDS = ids.filter((id) => OPERATIONS[id].legacy !== undefined);
