import { Type, type TBoolean } from 'typebox';
import { InputError, NUMERIC_TEXT_PATTERN } from '../core/index.js';
import { BODY_ERRORS, booleanAnswer, BooleanResultSchema, defineOperation, example, JSON_OBJECT_BODY, JsonText, PATH_ERRORS, preview } from './define.js';
import { numberTextTooLong, PARITY, parityOrProblem, type Limits, type ParityName } from './field-rules.js';
import { EXPECTED, ProblemError } from './problem.js';

const NUMBER_OR_NUMERIC_STRING = 'a number, or a string in numeric notation such as "42", "-1e3" or "0x1F"';
const WORD: Readonly<Record<ParityName, string>> = { isEven: 'even', isOdd: 'odd' };
// Both are decided from the number's text; its length bounds the work.
const PARITY_MEMORY = 16;

/**
 * A number that must stay exact, in the forms a generated client can type: an integer (a generator
 * maps it to an integer type), any other JSON number (answered 400: it must be an integer) and the
 * string form, in numeric notation at any magnitude, which no decoder rounds.
 */
const exactInteger = (description: string) =>
  Type.Union(
    [
      Type.Integer({
        description:
          'A JSON integer: exact here at any size, but a decoder that reads JSON numbers as doubles (JavaScript’s JSON.parse, a Go float64 field, a generator’s float32) rounds it past 2^53',
      }),
      Type.Number({ description: 'Any other JSON number, which is answered 400: it must be an integer' }),
      Type.String({
        pattern: NUMERIC_TEXT_PATTERN,
        description: 'The exact form: the number in numeric notation ("9007199254740993", "-1e3", "0x1F"), any magnitude; no decoder rounds a string',
      }),
    ],
    { [EXPECTED]: NUMBER_OR_NUMERIC_STRING, description },
  );

const ParityBodySchema = Type.Object(
  {
    input: exactInteger(
      'An integer, exact at any size: a JSON integer, or the same number as a string in numeric notation, which keeps every digit in a client whose JSON numbers are doubles (send 9007199254740993 as "9007199254740993")',
    ),
  },
  {
    $id: 'ParityRequest',
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      number: example('A JSON number', { input: 4 }),
      exact: example('Exact beyond 2^53 (a JSON number 9007199254740993 is just as exact)', { input: '9007199254740993' }),
      string: example('A numeric string', { input: '0x1F' }),
    },
  },
);

/** A number in a path segment, for parity: its length first, then the core rule, errors naming the value. */
function parityOfPathValue(name: ParityName) {
  return (text: string, limits: Limits): JsonText => {
    const tooLong = numberTextTooLong(text, limits);
    if (tooLong !== undefined) throw new ProblemError(400, `The path value ${tooLong}`);
    try {
      return booleanAnswer(PARITY[name](text));
    } catch (error) {
      if (error instanceof InputError) throw new ProblemError(400, `The path value ${JSON.stringify(preview(text))} ${error.message}`);
      throw error;
    }
  };
}

const parity = (name: ParityName) =>
  defineOperation({
    path: `/${name}`,
    summary: `Tell whether a number is ${WORD[name]}`,
    description: `Exact at any magnitude: decided from the number's JSON text, never a rounded double. The value must be an integer.`,
    tag: 'parity',
    body: ParityBodySchema,
    result: BooleanResultSchema,
    resultDescription: `\`ret\` is true when the number is ${WORD[name]}`,
    errors: BODY_ERRORS,
    numberField: 'input',
    memory: PARITY_MEMORY,
    answer: ({ input }, { limits, numberSource }) => ({ ret: parityOrProblem(name, input, numberSource, '/input', limits) }),
    byPath: {
      summary: `Tell whether the number in the path is ${WORD[name]}`,
      description: 'The same rule as the POST form, applied to the percent-decoded path segment.',
      errors: PATH_ERRORS,
      pattern: NUMERIC_TEXT_PATTERN,
      answer: parityOfPathValue(name),
    },
  });

export const isEven = parity('isEven');
export const isOdd = parity('isOdd');

const LegacyParityBodySchema = Type.Object(
  {
    number: exactInteger(
      'An integer, echoed back exactly as sent: a JSON integer, or the same number as a string in numeric notation, which keeps every digit in a client whose JSON numbers are doubles',
    ),
  },
  {
    $id: 'LegacyParityRequest',
    [EXPECTED]: 'a JSON object with a "number" field',
    'x-examples': { number: example('A JSON number', { number: 7 }), string: example('A numeric string', { number: '9007199254740993' }) },
  },
);

const legacyParityResultSchema = <Name extends ParityName>(field: Name) =>
  Type.Object(
    {
      number: exactInteger(
        'The number exactly as sent, every digit kept: a JSON number with the digits it was sent with (a decoder that reads doubles rounds it past 2^53), or the string as sent',
      ),
      // A computed key would widen to an index signature; the client's types need `isOdd` or `isEven` by name.
      ...({ [field]: Type.Boolean() } as Record<Name, TBoolean>),
    },
    { $id: field === 'isOdd' ? 'LegacyIsOddResult' : 'LegacyIsEvenResult', examples: [{ number: '9007199254740993', [field]: field === 'isOdd' }] },
  );

const legacyParity = <Name extends ParityName>(name: Name, path: string) =>
  defineOperation({
    path,
    summary: `Tell whether a number is ${WORD[name]} (earlier revision)`,
    description: 'Earlier revision, still served.',
    tag: 'legacy',
    body: LegacyParityBodySchema,
    result: legacyParityResultSchema(name),
    resultDescription: 'The number as sent, and the answer',
    errors: BODY_ERRORS,
    numberField: 'number',
    memory: PARITY_MEMORY,
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

export const legacyIsOdd = legacyParity('isOdd', '/is-odd');
export const legacyIsEven = legacyParity('isEven', '/is-even');
