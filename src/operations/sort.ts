import { Type } from 'typebox';
import { collatorFor } from '../core/index.js';
import { BODY_ERRORS, defineOperation, example, JSON_OBJECT_BODY } from './define.js';
import { sortedOrProblem } from './field-rules.js';
import { EXPECTED, fromCore } from './problem.js';

const SortBodySchema = Type.Object(
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
    $id: 'SortRequest',
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      numbers: example('Numbers, in numeric order', { input: [10, 9, 1.5, -3] }),
      strings: example('Strings, in code point order', { input: ['b', 'a', 'B'] }),
      mixed: example('Mixed types: null < false < true < numbers < strings < arrays < objects', { input: [[2], 'x', 1, null, { a: 1 }, true] }),
      desc: example('Descending, by locale', { input: ['b', 'a', 'B'], order: 'desc', locale: 'en' }),
    },
  },
);

const SortResponseSchema = Type.Object(
  { sortedArray: Type.Array(Type.Unknown(), { description: 'The input in sorted order, duplicates kept' }) },
  { $id: 'SortResult', examples: [{ sortedArray: [-3, 1.5, 9, 10] }] },
);

export const sort = defineOperation({
  path: '/sort',
  summary: 'Sort an array',
  description:
    'Numbers in numeric order, strings in Unicode code point order (or by `locale`), mixed types by one total order: ' +
    '`null < false < true < numbers < strings < arrays < objects`. Stable; duplicates kept. ' +
    'Numbers are read as doubles and come back in their shortest form: `[9007199254740993, 9007199254740992]` ' +
    'comes back as `[9007199254740992, 9007199254740992]`; a number beyond the range of a double (`1e400`) is refused with 400.',
  tag: 'sort',
  body: SortBodySchema,
  result: SortResponseSchema,
  resultDescription: 'The sorted array',
  errors: BODY_ERRORS,
  largeResult: true,
  memory: 28,
  answer: ({ input, order, locale }, { limits }) => {
    if (locale !== undefined) fromCore('/locale', () => collatorFor(locale));
    return { sortedArray: sortedOrProblem(input, '/input', limits, { order, locale }) };
  },
});

const LegacySortBodySchema = Type.Object(
  { array: Type.Array(Type.Unknown(), { [EXPECTED]: 'an array of JSON values', description: 'The values to sort' }) },
  {
    $id: 'LegacySortRequest',
    [EXPECTED]: 'a JSON object with an "array" field',
    'x-examples': { numbers: example('Numbers', { array: [3, 1, 2] }), mixed: example('Mixed types', { array: ['b', 1, null] }) },
  },
);

export const legacySort = defineOperation({
  path: '/sort',
  summary: 'Sort an array (earlier revision)',
  description: 'Earlier revision, still served.',
  tag: 'legacy',
  body: LegacySortBodySchema,
  result: SortResponseSchema,
  resultDescription: 'The sorted array',
  errors: BODY_ERRORS,
  largeResult: true,
  memory: sort.memory,
  answer: ({ array }, { limits }) => ({ sortedArray: sortedOrProblem(array, '/array', limits) }),
  legacy: {
    successor: '/api/sort',
    request: '{"array": [...]}',
    response: '{"sortedArray": [...]}',
    successorRequest: '{"input": [...]}',
    successorResponse: '{"sortedArray": [...]}',
  },
});
