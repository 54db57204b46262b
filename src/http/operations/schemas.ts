import { Type, type TSchema } from 'typebox';
import { PROBLEM_CONTENT_TYPE } from '../../operations/problem.js';
import { SETTINGS } from '../../config.js';
import { REQUEST_CODINGS } from '../protocol/content-coding.js';
import { ANSWER_CODINGS } from '../protocol/answer-coding.js';

/**
 * The shapes the HTTP layer adds to the operations' own (src/operations): the problem body, the
 * problem responses by status and the path parameter, as TypeBox schemas that serialize responses
 * and are the OpenAPI document (@fastify/swagger).
 */

const FieldErrorSchema = Type.Object({
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
  400: 'The body is missing, is not JSON, is not an object, or a field is invalid (`errors` names each field); or a coded body is corrupt, named by its coding',
  404: 'No such path',
  405: "The path exists but not with this method (a path value left empty, `/api/isEven/`, is the POST operation's path); the `Allow` header lists the methods it takes",
  413: `The body (decoded, when it is coded), an array, the parts of a split or a nesting depth is over its limit, or answering the body would take more memory than ${SETTINGS.memoryLimit.env} allows one request`,
  414: 'A path segment is longer than the service accepts',
  415: `The body is not \`application/json\` (UTF-8), or its \`Content-Encoding\` is not one the service reads (${REQUEST_CODINGS.join(', ')}), which \`Accept-Encoding\` then lists`,
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
        ...(status === 415
          ? { headers: { 'Accept-Encoding': { type: 'string', description: 'The codings request bodies may have', examples: [REQUEST_CODINGS.join(', ')] } } }
          : {}),
      },
    ]),
  );
}

// The schema itself, not under `content`: Fastify then finds the route's serializer directly
// instead of parsing the reply's Content-Type on every answer; @fastify/swagger writes it under
// application/json all the same, with
// x-response-description as the answer's description.
export const jsonResponse = (description: string, schema: TSchema) => ({ ...schema, 'x-response-description': description });

/**
 * The request headers of a route that takes a body, for the OpenAPI document (the routes do not
 * validate them: protocol/content-coding.ts and answer-coding.ts read them): the body's coding, and
 * on routes whose answers may be large, the codings the answer may come in.
 */
// No examples: the docs page's "Try it out" fills a parameter with its example, and would send a plain body marked gzip.
export const codingHeaders = (codedAnswers: boolean) =>
  Type.Object({
    'content-encoding': Type.Optional(
      Type.String({
        description: `The body's coding, if any: ${REQUEST_CODINGS.join(', ')} or identity; it is decoded before it is read, and ${SETTINGS.bodyLimit.env} applies to the decoded bytes. Another coding gets 415`,
      }),
    ),
    ...(codedAnswers
      ? {
          'accept-encoding': Type.Optional(
            Type.String({
              description: `Answers of ${SETTINGS.compressMinBytes.env} (1 KiB by default) or more are sent in the coding this asks for, by q-value: ${ANSWER_CODINGS.join(', ')}; the answer then says \`Content-Encoding\`, and every answer \`Vary: Accept-Encoding\``,
            }),
          ),
        }
      : {}),
  });

/**
 * Route config that puts a request's body and headers in the OpenAPI document without Fastify
 * validating them (it would run a second, needless validator): the engine reads the body itself,
 * with the same schema (engine/run.ts).
 *
 * @example
 * app.post('/sort', { config: { ...documentedRequest({ body: SortBody, headers: codingHeaders(true) }) } }, handler);
 */
export const documentedRequest = (parts: { readonly body: unknown; readonly headers: unknown }) => ({
  swaggerTransform: ({ schema, url }: { schema: object; url: string }) => ({ schema: { ...schema, ...parts }, url }),
});

export const NumberParamsSchema = Type.Object({
  number: Type.String({ description: 'The value, percent-decoded', examples: ['12345'] }),
});
