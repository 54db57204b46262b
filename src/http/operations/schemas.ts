import { Type, type TSchema } from 'typebox';
import { PROBLEM_CONTENT_TYPE, problemOf, type Problem } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { FAILURE_TEXT, MEDIA_TYPE_TEXT } from '../problem-responses.js';
import { OPERATIONS, type Operation, type OperationId } from '../../operations/index.js';
import { DEFAULT_CONFIG, SETTINGS } from '../../config.js';
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
    $id: 'Problem',
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
  400: 'The body is missing, is not JSON, is not an object, or a field is invalid (`errors` names each field); a coded body is corrupt, named by its coding; or the path is malformed or its value invalid',
  404: 'No such path',
  405: "The path exists but not with this method (a path value left empty, `/api/isEven/`, is the POST operation's path); the `Allow` header lists the methods it takes",
  413: `The body (decoded, when it is coded), an array, the parts of a split or a nesting depth is over its limit, or answering the body would take more memory than ${SETTINGS.memoryLimit.env} allows one request`,
  414: 'A path segment is longer than the service accepts',
  415: `The body is not \`application/json\` (UTF-8), or its \`Content-Encoding\` is not one the service reads (${REQUEST_CODINGS.join(', ')}), which \`Accept-Encoding\` then lists`,
  500: 'An unexpected failure; nothing internal is disclosed',
  429: `Too many requests from this client (${SETTINGS.rateLimitMax.env}, off by default); retry after the seconds in \`Retry-After\``,
  503: `At capacity: callers come and go, and the queue this request's work would join (the event loop, the offload pool) has stood past ${SETTINGS.overloadTargetMs.env} for 100 ms; only a body of 4 KiB or more (never a GET) is refused for this; or no memory is free for this body now (${SETTINGS.memoryLimit.env}); or shedding load (${SETTINGS.maxEventLoopDelayMs.env}, off by default). Retry after the seconds in \`Retry-After\``,
  408: `The request was not received in time (${SETTINGS.headersTimeoutMs.env}, ${SETTINGS.requestTimeoutMs.env}); the connection closes`,
  431: 'The request headers are larger than the service accepts; the connection closes',
};

/** A schema under a name: itself when that is its `$id` already, else a copy with it. */
const withName = (schema: TSchema, name: string): TSchema => ((schema as { $id?: string }).$id === name ? schema : { ...schema, $id: name });

/**
 * An operation's body and result as the document names them: by their declared `$id` (a schema
 * two operations share, `ParityRequest`), else after the operation (`ReverseRequest`).
 *
 * @example
 * operationSchemas('sort').body.$id //=> 'SortRequest'
 */
export function operationSchemas(id: OperationId): { readonly body: TSchema; readonly result: TSchema } {
  const { body, result } = OPERATIONS[id] as Operation;
  const named = `${id.charAt(0).toUpperCase()}${id.slice(1)}`;
  const declared = (schema: TSchema) => (schema as { $id?: string }).$id;
  return { body: withName(body, declared(body) ?? `${named}Request`), result: withName(result, declared(result) ?? `${named}Result`) };
}

/**
 * Every schema the document names, each once (its `$id`): the problem, and the operations' bodies
 * and results. Added to the app before the routes that refer to them (`referTo`).
 */
export function namedSchemas(): TSchema[] {
  const byId = new Map<string, TSchema>([['Problem', ProblemSchema]]);
  for (const id of Object.keys(OPERATIONS) as OperationId[]) {
    for (const schema of Object.values(operationSchemas(id))) byId.set(nameOf(schema), schema);
  }
  return [...byId.values()];
}

/**
 * What a route's problem examples are made of, besides the texts every route shares: its own 400
 * (what the service answers it, for an empty object body or a malformed path), the path as the
 * document writes it and the methods it takes (for its 405), and its own 415 words, if any.
 * test/http/openapi-examples.test.ts sends each route the requests that get these answers.
 */
export interface ProblemContext {
  /** The headers every answer of the route carries (`answerHeaders`). */
  readonly headers: Readonly<Record<string, object>>;
  readonly badRequest: Problem;
  readonly path: string;
  readonly allow: string;
  readonly mediaTypeProblem?: string;
}

/** The example of a status: a problem the service answers with it, with the default settings. */
function problemExample(status: number, context: ProblemContext): Problem {
  switch (status) {
    case 400:
      return context.badRequest;
    case 405:
      return problemOf(405, LIMIT_TEXTS.methodNotAllowed('PUT', context.path, context.allow));
    case 408:
      return problemOf(408, LIMIT_TEXTS.requestTimeout);
    case 413:
      return problemOf(413, LIMIT_TEXTS.body(DEFAULT_CONFIG.bodyLimit));
    case 414:
      return problemOf(414, LIMIT_TEXTS.pathValue(DEFAULT_CONFIG.numberTextLimit));
    case 415:
      return problemOf(415, context.mediaTypeProblem ?? MEDIA_TYPE_TEXT);
    case 429:
      return problemOf(429, LIMIT_TEXTS.rate(RATE_EXAMPLE.max, RATE_EXAMPLE.window));
    case 431:
      return problemOf(431, LIMIT_TEXTS.headers);
    case 503:
      return problemOf(503, LIMIT_TEXTS.overloadedNow);
    default:
      return problemOf(status, FAILURE_TEXT);
  }
}

// The 429 example's limit: RATE_LIMIT_MAX is off by default.
export const RATE_EXAMPLE = { max: 100, window: '1 minute' } as const;

/**
 * The headers every answer of a route carries, whatever its status: its request id; on a route
 * whose answers may be coded, `Vary`; and a route's own (the earlier revision's `Deprecation`,
 * `Link` and `Sunset`).
 */
export function answerHeaders(coded: boolean, own: Readonly<Record<string, object>> = {}): Readonly<Record<string, object>> {
  return {
    'X-Request-Id': {
      type: 'string',
      description:
        'The request’s id, as in the access log: the client’s own `X-Request-Id` when it sent a usable one (up to 128 characters), else one the service made',
    },
    ...(coded
      ? {
          Vary: {
            type: 'string',
            description: `\`accept-encoding\` (after \`origin\` when CORS sets it), unless ${SETTINGS.compressMinBytes.env} is \`off\`: the answer's coding depends on \`Accept-Encoding\``,
            examples: ['accept-encoding'],
          },
          'Content-Encoding': {
            type: 'string',
            description: `The answer's coding, when it has one: ${ANSWER_CODINGS.join(', ')}, the first \`Accept-Encoding\` asked for, on an answer of ${SETTINGS.compressMinBytes.env} (1 KiB) or more`,
          },
        }
      : {}),
    ...own,
  };
}

/** A GET operation's 200 and 304 headers: any cache may keep the answer for a year (protocol/caching.ts). */
export const CACHEABLE_HEADERS = {
  'Cache-Control': {
    type: 'string',
    description: 'The answer is a pure function of the URL: any cache may keep it a year without asking again (RFC 9111, RFC 8246)',
    examples: ['public, max-age=31536000, immutable'],
  },
  ETag: {
    type: 'string',
    description: 'A strong entity tag of the answer’s bytes (RFC 9110 §8.8.3); sent back in `If-None-Match`, it gets 304',
    examples: ['"c-x4te00Ohn9UicoH5duj7mgd5R3w"'],
  },
} as const;

const RETRY_AFTER = { 'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again' } };

/** Problem responses for the given statuses, with the content type the service sends them with and an example of each. */
export function problemResponses(context: ProblemContext, ...statuses: number[]): Record<number, unknown> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: PROBLEM_WHEN[status] ?? 'Error',
        content: { [PROBLEM_CONTENT_TYPE]: { schema: referTo(ProblemSchema), example: problemExample(status, context) } },
        headers: {
          ...context.headers,
          ...(status === 429 || status === 503 ? RETRY_AFTER : {}),
          ...(status === 405 ? { Allow: { type: 'string', description: 'The methods the path takes', examples: [context.allow] } } : {}),
          ...(status === 415
            ? { 'Accept-Encoding': { type: 'string', description: 'The codings request bodies may have', examples: [REQUEST_CODINGS.join(', ')] } }
            : {}),
        },
      },
    ]),
  );
}

/**
 * A reference to a named schema (one with an `$id`, added to the app before the routes, openapi.ts):
 * the document then has it once, in `components.schemas`, and every use points there.
 *
 * @example
 * referTo(SortBodySchema) //=> { $ref: 'SortRequest#' }
 */
export function referTo(schema: TSchema): TSchema {
  return { $ref: `${nameOf(schema)}#` };
}

/** A named schema's name: its `$id`. */
export function nameOf(schema: object): string {
  const { $id } = schema as { $id?: unknown };
  if (typeof $id !== 'string') throw new Error(`a schema without an $id has no name: ${JSON.stringify(schema).slice(0, 80)}`);
  return $id;
}

// The schema itself, not under `content`: Fastify then finds the route's serializer directly
// instead of parsing the reply's Content-Type on every answer; @fastify/swagger writes it under
// application/json all the same, with `description` as the answer's description.
export const jsonResponse = (description: string, schema: TSchema, headers: Readonly<Record<string, object>>) => ({ ...referTo(schema), description, headers });

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
export const documentedRequest = (parts: { readonly body: object; readonly headers: unknown }) => {
  const body = '$id' in parts.body ? referTo(parts.body) : parts.body;
  return { swaggerTransform: ({ schema, url }: { schema: object; url: string }) => ({ schema: { ...schema, body, headers: parts.headers }, url }) };
};

/**
 * A path form's parameter as the OpenAPI document gives it: with the pattern its operation checks.
 * The route does not validate it: the operation's own 400 says what is wrong with the value.
 *
 * @example
 * app.get('/isEven/:number', { config: { ...documentedPathValue(NUMERIC_TEXT_PATTERN) } }, handler); // the document's parameter has the pattern
 */
export const documentedPathValue = (pattern: string | undefined) => ({
  swaggerTransform: ({ schema, url }: { schema: object; url: string }) => ({
    schema: {
      ...schema,
      params: Type.Object({
        number: Type.String({ description: 'The value, percent-decoded', examples: ['12345'], ...(pattern === undefined ? {} : { pattern }) }),
      }),
      headers: Type.Object({
        'if-none-match': Type.Optional(Type.String({ description: 'The `ETag` of an answer kept: when it is this answer’s, 304 with no body' })),
      }),
    },
    url,
  }),
});
