import { isNumber as isNumberCore } from '../core/index.js';
import { AnyInputBodySchema, BODY_ERRORS, booleanAnswer, BooleanResultSchema, defineOperation, PATH_ERRORS } from './define.js';

export const isNumber = defineOperation({
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
  memory: 16,
  answer: ({ input }) => ({ ret: isNumberCore(input) }),
  byPath: {
    summary: 'Tell whether the path segment is a number',
    description: 'The string rule of the POST form, applied to the percent-decoded path segment.',
    errors: PATH_ERRORS,
    answer: (text) => booleanAnswer(isNumberCore(text)),
  },
});
