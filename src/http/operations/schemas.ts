import { Type, type TSchema } from 'typebox';
import { EXPECTED, PROBLEM_CONTENT_TYPE } from '../../operations/problem.js';
import { SETTINGS } from '../../config.js';

/**
 * Every request and response shape, as TypeBox schemas: they validate requests, serialize
 * responses and are the OpenAPI document (@fastify/swagger), so the three cannot disagree.
 * `x-expected` gives the words an error detail uses for what a field accepts; `x-examples`
 * become the named request examples of the OpenAPI document.
 */

const JSON_OBJECT_BODY = 'a JSON object with an "input" field';
const example = (summary: string, value: unknown) => ({ summary, value });

export const FieldErrorSchema = Type.Object({
  pointer: Type.String({ description: 'JSON Pointer (RFC 6901) to the offending field of the request body', examples: ['/input'] }),
  detail: Type.String({ examples: ['/input must be an integer'] }),
});

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'Always `about:blank`: the status code says it all (RFC 9457 §4.2.1)' }),
    title: Type.String({ description: 'The HTTP status phrase' }),
    status: Type.Integer(),
    detail: Type.String({ description: 'What was wrong, in plain words, and what is accepted' }),
    errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'Each offending field of the request body' })),
  },
  {
    description: 'RFC 9457 Problem Details',
    examples: [
      {
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        detail: '/input must be an integer',
        errors: [{ pointer: '/input', detail: '/input must be an integer' }],
      },
    ],
  },
);

const PROBLEM_WHEN: Readonly<Record<number, string>> = {
  400: 'The body is missing, is not JSON, is not an object, or a field is invalid; `errors` names each field',
  404: 'No such path',
  405: "The path exists but not with this method (a path value left empty, `/api/isEven/`, is the POST operation's path); the `Allow` header lists the methods it takes",
  413: `The body, an array, the parts of a split or a nesting depth is over its limit, or answering the body would take more memory than ${SETTINGS.memoryLimit.env} allows one request`,
  414: 'A path segment is longer than the service accepts',
  415: 'The body is not `application/json` (UTF-8)',
  500: 'An unexpected failure; nothing internal is disclosed',
  429: `Too many requests from this client (${SETTINGS.rateLimitMax.env}, off by default); retry after the seconds in \`Retry-After\``,
  503: `Overloaded: no memory free for this body now (${SETTINGS.memoryLimit.env}), or shedding load (${SETTINGS.maxEventLoopDelayMs.env}, off by default); retry after the seconds in \`Retry-After\``,
};

/** Problem responses for the given statuses, with the content type the service sends them with. */
export function problemResponses(...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: PROBLEM_WHEN[status] ?? 'Error',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
        ...(status === 429 || status === 503 ? { headers: { 'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again' } } } : {}),
      },
    ]),
  );
}

// The schema itself, not under `content`: Fastify then finds the route's serializer directly
// instead of parsing the reply's Content-Type on every answer; @fastify/swagger writes it under
// application/json all the same, with
// x-response-description as the answer's description.
const jsonResponse = (description: string, schema: TSchema) => ({ ...schema, 'x-response-description': description });

export const BODY_ERRORS = [400, 413, 415, 429, 500, 503];
export const PATH_ERRORS = [400, 405, 414, 429, 500, 503];

// ---- sort

export const SortBodySchema = Type.Object(
  {
    input: Type.Array(Type.Unknown(), {
      [EXPECTED]: 'an array of JSON values',
      description: 'The values to sort; any JSON values, mixed types included',
    }),
    order: Type.Optional(
      Type.Union([Type.Literal('asc'), Type.Literal('desc')], {
        [EXPECTED]: '"asc" or "desc"',
        description: '`asc` (default) or `desc`; `desc` is the reverse order and stays stable',
      }),
    ),
    locale: Type.Optional(
      Type.String({
        [EXPECTED]: 'a BCP 47 language tag such as "en" or "de-DE"',
        description: 'Orders strings by this locale’s collation instead of Unicode code points',
      }),
    ),
  },
  {
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      numbers: example('Numbers, in numeric order', { input: [10, 9, 1.5, -3] }),
      strings: example('Strings, in code point order', { input: ['b', 'a', 'B'] }),
      mixed: example('Mixed types: null < false < true < numbers < strings < arrays < objects', { input: [[2], 'x', 1, null, { a: 1 }, true] }),
      desc: example('Descending, by locale', { input: ['b', 'a', 'B'], order: 'desc', locale: 'en' }),
    },
  },
);

export const SortResponseSchema = Type.Object(
  { sortedArray: Type.Array(Type.Unknown(), { description: 'The input in sorted order, duplicates kept' }) },
  { examples: [{ sortedArray: [-3, 1.5, 9, 10] }] },
);

// ---- isEven, isOdd

const NUMBER_OR_NUMERIC_STRING = 'a number, or a string in numeric notation such as "42", "-1e3" or "0x1F"';

export const ParityBodySchema = Type.Object(
  {
    input: Type.Union([Type.Number(), Type.String()], {
      [EXPECTED]: NUMBER_OR_NUMERIC_STRING,
      description: 'An integer, as a JSON number or a numeric string; exact at any size',
    }),
  },
  {
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      number: example('A JSON number', { input: 4 }),
      exact: example('Exact beyond 2^53 (a JSON number 9007199254740993 is just as exact)', { input: '9007199254740993' }),
      string: example('A numeric string', { input: '0x1F' }),
    },
  },
);

export const NumberParamsSchema = Type.Object({
  number: Type.String({ description: 'The value, percent-decoded', examples: ['12345'] }),
});

export const BooleanResultSchema = Type.Object({ ret: Type.Boolean() }, { examples: [{ ret: true }] });

// ---- isNumber, toString

export const AnyInputBodySchema = Type.Object(
  { input: Type.Unknown({ [EXPECTED]: 'any JSON value', description: 'Any JSON value' }) },
  {
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      number: example('A number', { input: 1e21 }),
      string: example('A string', { input: ' -1.5e3 ' }),
      object: example('An object', { input: { b: [1.0, true], a: 'é' } }),
    },
  },
);

export const StringResultSchema = Type.Object({ ret: Type.String() }, { examples: [{ ret: '{"a":"é","b":[1,true]}' }] });

// ---- stringSplit

const SEPARATOR = {
  [EXPECTED]: 'a string',
  description: 'Literal text to split at (never a regular expression); `""` splits into user-perceived characters',
};

export const StringSplitBodySchema = Type.Object(
  {
    input: Type.Object(
      {
        string: Type.String({ [EXPECTED]: 'a string', description: 'The string to split' }),
        seperator: Type.Optional(Type.String({ ...SEPARATOR, description: `${SEPARATOR.description}. Spelled as the contract spells it` })),
        separator: Type.Optional(Type.String({ ...SEPARATOR, description: 'Alias of `seperator`; if both are given they must be equal' })),
      },
      { [EXPECTED]: 'an object with a "string" field and an optional "seperator"' },
    ),
  },
  {
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      separator: example('Split at a separator', { input: { string: 'a,b,,c', seperator: ',' } }),
      graphemes: example('Split into user-perceived characters', { input: { string: '👍🏽é', seperator: '' } }),
      none: example('No separator', { input: { string: 'a b' } }),
    },
  },
);

export const StringListResultSchema = Type.Object({ ret: Type.Array(Type.String()) }, { examples: [{ ret: ['a', 'b', '', 'c'] }] });

export { jsonResponse };

// ---- the earlier revision (docs/behaviour.md §4)

export const LegacySortBodySchema = Type.Object(
  { array: Type.Array(Type.Unknown(), { [EXPECTED]: 'an array of JSON values', description: 'The values to sort' }) },
  {
    [EXPECTED]: 'a JSON object with an "array" field',
    'x-examples': { numbers: example('Numbers', { array: [3, 1, 2] }), mixed: example('Mixed types', { array: ['b', 1, null] }) },
  },
);

export const LegacyParityBodySchema = Type.Object(
  {
    number: Type.Union([Type.Number(), Type.String()], {
      [EXPECTED]: NUMBER_OR_NUMERIC_STRING,
      description: 'An integer, as a JSON number or a numeric string; echoed back exactly as sent',
    }),
  },
  {
    [EXPECTED]: 'a JSON object with a "number" field',
    'x-examples': { number: example('A JSON number', { number: 7 }), string: example('A numeric string', { number: '9007199254740993' }) },
  },
);

export const LegacyToStringBodySchema = Type.Object(
  { number: Type.Unknown({ [EXPECTED]: 'any JSON value', description: 'Any JSON value, despite the name' }) },
  {
    [EXPECTED]: 'a JSON object with a "number" field',
    'x-examples': { number: example('A number', { number: 1e21 }), object: example('An object', { number: { b: 1, a: 2 } }) },
  },
);

export const legacyParityResultSchema = (field: 'isOdd' | 'isEven') =>
  Type.Object(
    {
      number: Type.Union([Type.Number(), Type.String()], { description: 'The number exactly as sent, every digit kept' }),
      [field]: Type.Boolean(),
    },
    { examples: [{ number: '9007199254740993', [field]: field === 'isOdd' }] },
  );
