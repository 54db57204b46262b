import { Type } from 'typebox';
import { LimitError, stringSplit as split } from '../core/index.js';
import { BODY_ERRORS, defineOperation, example, JSON_OBJECT_BODY } from './define.js';
import { LIMIT_TEXTS } from './limit-texts.js';
import { EXPECTED, fieldProblem } from './problem.js';

const SEPARATOR = {
  [EXPECTED]: 'a string',
  description: 'Literal text to split at (never a regular expression); `""` splits into user-perceived characters',
};

const StringSplitBodySchema = Type.Object(
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
    $id: 'StringSplitRequest',
    [EXPECTED]: JSON_OBJECT_BODY,
    'x-examples': {
      separator: example('Split at a separator', { input: { string: 'a,b,,c', seperator: ',' } }),
      graphemes: example('Split into user-perceived characters', { input: { string: '👍🏽é', seperator: '' } }),
      none: example('No separator', { input: { string: 'a b' } }),
    },
  },
);

const StringListResultSchema = Type.Object({ ret: Type.Array(Type.String()) }, { $id: 'StringListResult', examples: [{ ret: ['a', 'b', '', 'c'] }] });

export const stringSplit = defineOperation({
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
  memory: 34,
  answer: ({ input: { string, seperator, separator } }, { limits }) => {
    if (seperator !== undefined && separator !== undefined && seperator !== separator) {
      throw fieldProblem('/input/separator', 'differs from /input/seperator; send one of them, or both equal');
    }
    try {
      return { ret: split(string, seperator ?? separator, { maxParts: limits.stringSplitMaxParts }) };
    } catch (error) {
      if (error instanceof LimitError) throw fieldProblem('/input/string', LIMIT_TEXTS.splitParts(error.message, limits.stringSplitMaxParts), 413);
      throw error;
    }
  },
});
