import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { isNumber, InputError } from '../core/index.js';
import { PARITY, numberTextTooLong, serializeNatively, type Limits } from './answers.js';
import { BODY_OPERATIONS, bodyRouteOptions } from './body-operations.js';
import { ProblemError } from './problem.js';
import {
  AnyInputBodySchema,
  BODY_ERRORS,
  BooleanResultSchema,
  NumberParamsSchema,
  PATH_ERRORS,
  ParityBodySchema,
  SortBodySchema,
  SortResponseSchema,
  StringListResultSchema,
  StringResultSchema,
  StringSplitBodySchema,
  jsonResponse,
  problemResponses,
} from './schemas.js';

/** The current contract's operations (docs/behaviour.md §2), under the prefix they are registered with. */
export const operationRoutes: FastifyPluginAsync<Limits> = async (plugin, limits) => {
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/sort',
    {
      ...serializeNatively,
      ...bodyRouteOptions('sort'),
      schema: {
        operationId: 'sort',
        summary: 'Sort an array',
        description:
          'Numbers in numeric order, strings in Unicode code point order (or by `locale`), mixed types by one total order: ' +
          '`null < false < true < numbers < strings < arrays < objects`. Stable; duplicates kept.',
        tags: ['sort'],
        body: SortBodySchema,
        response: { 200: jsonResponse('The sorted array', SortResponseSchema), ...problemResponses(...BODY_ERRORS) },
      },
    },
    async (request) => BODY_OPERATIONS.sort.answer(request.body, { limits, numberSource: undefined }),
  );

  for (const name of ['isEven', 'isOdd'] as const) {
    const decide = PARITY[name];
    const word = name === 'isEven' ? 'even' : 'odd';
    app.post(
      `/${name}`,
      {
        ...bodyRouteOptions(name),
        schema: {
          operationId: name,
          summary: `Tell whether a number is ${word}`,
          description: `Exact at any magnitude: decided from the number's JSON text, never a rounded double. The value must be an integer.`,
          tags: ['parity'],
          body: ParityBodySchema,
          response: { 200: jsonResponse(`\`ret\` is true when the number is ${word}`, BooleanResultSchema), ...problemResponses(...BODY_ERRORS) },
        },
      },
      async (request) => BODY_OPERATIONS[name].answer(request.body, { limits, numberSource: request.numberSource }),
    );
    app.get(
      `/${name}/:number`,
      {
        schema: {
          operationId: `${name}ByPath`,
          summary: `Tell whether the number in the path is ${word}`,
          description: 'The same rule as the POST form, applied to the percent-decoded path segment.',
          tags: ['parity'],
          params: NumberParamsSchema,
          response: { 200: jsonResponse(`\`ret\` is true when the number is ${word}`, BooleanResultSchema), ...problemResponses(...PATH_ERRORS) },
        },
      },
      async (request) => {
        const text = request.params.number;
        const tooLong = numberTextTooLong(text, limits);
        if (tooLong !== undefined) throw new ProblemError(400, `The path value ${tooLong}`);
        try {
          return { ret: decide(text) };
        } catch (error) {
          if (error instanceof InputError) throw new ProblemError(400, `The path value ${JSON.stringify(preview(text))} ${error.message}`);
          throw error;
        }
      },
    );
  }

  app.post(
    '/isNumber',
    {
      ...bodyRouteOptions('isNumber'),
      schema: {
        operationId: 'isNumber',
        summary: 'Tell whether a value is a number',
        description:
          'True for any JSON number and for a string that, trimmed, is written in JavaScript numeric notation ' +
          '(`"12"`, `" -1.5e3 "`, `".5"`, `"0x1F"`, `"1e400"`); false for everything else.',
        tags: ['isNumber'],
        body: AnyInputBodySchema,
        response: { 200: jsonResponse('`ret` is true when the value is a number', BooleanResultSchema), ...problemResponses(...BODY_ERRORS) },
      },
    },
    async (request) => BODY_OPERATIONS.isNumber.answer(request.body, { limits, numberSource: undefined }),
  );

  app.get(
    '/isNumber/:number',
    {
      schema: {
        operationId: 'isNumberByPath',
        summary: 'Tell whether the path segment is a number',
        description: 'The string rule of the POST form, applied to the percent-decoded path segment.',
        tags: ['isNumber'],
        params: NumberParamsSchema,
        response: { 200: jsonResponse('`ret` is true when the value is a number', BooleanResultSchema), ...problemResponses(...PATH_ERRORS) },
      },
    },
    async (request) => ({ ret: isNumber(request.params.number) }),
  );

  app.post(
    '/toString',
    {
      ...serializeNatively,
      ...bodyRouteOptions('toString'),
      schema: {
        operationId: 'toString',
        summary: 'Convert a value to its string form',
        description: 'A string comes back unchanged; any other value as its RFC 8785 canonical JSON text.',
        tags: ['toString'],
        body: AnyInputBodySchema,
        response: { 200: jsonResponse('`ret` is the string form', StringResultSchema), ...problemResponses(...BODY_ERRORS) },
      },
    },
    async (request) => BODY_OPERATIONS.toString.answer(request.body, { limits, numberSource: undefined }),
  );

  app.post(
    '/stringSplit',
    {
      ...serializeNatively,
      ...bodyRouteOptions('stringSplit'),
      schema: {
        operationId: 'stringSplit',
        summary: 'Split a string',
        description:
          'Splits `input.string` at each occurrence of the literal `input.seperator` (alias `separator`). ' +
          'No separator gives `[string]`; `""` gives user-perceived characters (grapheme clusters).',
        tags: ['stringSplit'],
        body: StringSplitBodySchema,
        response: { 200: jsonResponse('`ret` is the list of parts', StringListResultSchema), ...problemResponses(...BODY_ERRORS) },
      },
    },
    async (request) => BODY_OPERATIONS.stringSplit.answer(request.body, { limits, numberSource: undefined }),
  );
};

function preview(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
