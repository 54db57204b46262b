import { Type } from 'typebox';
import { AnyInputBodySchema, BODY_ERRORS, defineOperation, example, StringResultSchema } from './define.js';
import { stringFormOrProblem } from './field-rules.js';
import { EXPECTED } from './problem.js';

export const toString = defineOperation({
  path: '/toString',
  summary: 'Convert a value to its string form',
  description: 'A string comes back unchanged; any other value as its RFC 8785 canonical JSON text.',
  tag: 'toString',
  body: AnyInputBodySchema,
  result: StringResultSchema,
  resultDescription: '`ret` is the string form',
  errors: BODY_ERRORS,
  largeResult: true,
  memory: 26,
  answer: ({ input }) => ({ ret: stringFormOrProblem(input, '/input') }),
});

const LegacyToStringBodySchema = Type.Object(
  { number: Type.Unknown({ [EXPECTED]: 'any JSON value', description: 'Any JSON value, despite the name' }) },
  {
    $id: 'LegacyToStringRequest',
    [EXPECTED]: 'a JSON object with a "number" field',
    'x-examples': { number: example('A number', { number: 1e21 }), object: example('An object', { number: { b: 1, a: 2 } }) },
  },
);

export const legacyToString = defineOperation({
  path: '/toString',
  summary: 'Convert a value to its string form (earlier revision)',
  description: 'Earlier revision, still served.',
  tag: 'legacy',
  body: LegacyToStringBodySchema,
  result: StringResultSchema,
  resultDescription: '`ret` is the string form',
  errors: BODY_ERRORS,
  largeResult: true,
  memory: toString.memory,
  answer: ({ number }) => ({ ret: stringFormOrProblem(number, '/number') }),
  legacy: {
    successor: '/api/toString',
    request: '{"number": value}',
    response: '{"ret": string}',
    successorRequest: '{"input": value}',
    successorResponse: '{"ret": string}',
  },
});
