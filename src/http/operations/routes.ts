import type { FastifyInstance, FastifyPluginAsync, FastifyReply, RouteShorthandOptions } from 'fastify';
import { CURRENT_OPERATION_IDS, JsonText, OPERATIONS, type Operation, type OperationId } from '../../operations/index.js';
import type { BatchLimits } from '../../engine/batch.js';
import { JSON_CONTENT_TYPE } from '../protocol/json-body.js';
import {
  answerHeaders,
  CACHEABLE_HEADERS,
  codingHeaders,
  documentedPathValue,
  documentedRequest,
  jsonResponse,
  operationSchemas,
  problemResponses,
  type ProblemContext,
} from './schemas.js';
import { BAD_URL_TEXT, sendProblem } from '../problem-responses.js';
import { problemOf } from '../../operations/problem.js';
import { DEFAULT_CONFIG } from '../../config.js';
import type { OffloadPool } from '../memory/offload-pool.js';
import { runBody, runPathValue, type Outcome } from '../../engine/run.js';
import { ownHooks } from '../protocol/route-config.js';
import { sendCacheable } from '../protocol/caching.js';

/** What the routes answer with: the limits, the worker threads for bodies over `offloadBodyBytes`, and whether answers may be compressed. */
export interface Answering {
  readonly limits: BatchLimits;
  readonly offloadBodyBytes: number;
  readonly pool: OffloadPool;
  /** COMPRESS_MIN_BYTES is not off: the answers of a route whose config allows it may be coded, and say `Vary: Accept-Encoding`. */
  readonly codesAnswers: boolean;
}

/**
 * Route option for results of any size: native JSON.stringify writes a large array of strings or
 * values faster than a schema-compiled serializer, which checks each element against the schema,
 * and the handlers already return the exact shape.
 */
const serializeNatively = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) };

/** Route config of an operation whose answers are always small (a parity, `isNumber`): none is worth compressing (answer-coding.ts). */
const NEVER_CODED = { codedAnswers: false } as const;

/** Sends an outcome: a problem, JSON text as it is, or an object through the route's serializer. */
function sendOutcome(reply: FastifyReply, outcome: Outcome): FastifyReply | object {
  if (!('result' in outcome)) return sendProblem(reply, outcome.problem);
  return outcome.result instanceof JsonText ? reply.type(JSON_CONTENT_TYPE).send(outcome.result.text) : outcome.result;
}

/** A POST route's problem examples: its 400 is what it answers an empty object. */
const postContext = (app: FastifyInstance, operation: Operation): Omit<ProblemContext, 'headers'> => {
  const outcome = runBody(operation, Buffer.from('{}'), DEFAULT_CONFIG);
  if (!('problem' in outcome)) throw new Error(`${operation.path} answers {} with 200: its 400 example needs another body`);
  return { badRequest: outcome.problem, path: `${app.prefix}${operation.path}`, allow: 'OPTIONS, POST' };
};

/** The 200 response of an operation, as the route's schema and the OpenAPI document give it. */
const resultResponse = (id: OperationId, headers: Readonly<Record<string, object>>) =>
  jsonResponse((OPERATIONS[id] as Operation).resultDescription, operationSchemas(id).result, headers);

/**
 * Registers `POST <path>` for an operation of the table: the operation in the route's config
 * (admission, metrics), its documented body and answers, and a handler that runs it on the body's
 * bytes, on the event loop or, over `offloadBodyBytes`, in the worker threads.
 */
export function postOperation(
  app: FastifyInstance,
  id: OperationId,
  answering: Answering,
  schema: { extra?: object; headers?: Readonly<Record<string, string>>; documentedHeaders?: Readonly<Record<string, object>> },
): void {
  const operation = OPERATIONS[id] as Operation;
  const { limits, offloadBodyBytes, pool } = answering;
  const large = operation.largeResult === true;
  const headers = answerHeaders(large, schema.documentedHeaders);
  const options: RouteShorthandOptions = {
    ...(large ? serializeNatively : {}),
    ...ownHooks({ headers: schema.headers, codedAnswers: answering.codesAnswers && large }),
    config: {
      memory: { perByte: operation.memory },
      countsAs: id,
      ...(large ? {} : NEVER_CODED),
      ...(schema.headers === undefined ? {} : { headers: schema.headers }),
      ...documentedRequest({ body: operationSchemas(id).body, headers: codingHeaders(large) }),
    },
    schema: {
      operationId: id,
      summary: operation.summary,
      description: operation.description,
      tags: [operation.tag],
      ...schema.extra,
      response: { 200: resultResponse(id, headers), ...problemResponses({ ...postContext(app, operation), headers }, ...operation.errors) },
    },
  };
  app.post(operation.path, options, async (request, reply) => {
    const bytes = request.body as Buffer | undefined;
    if (bytes !== undefined && bytes.length > offloadBodyBytes) return reply.type(JSON_CONTENT_TYPE).send((await pool.answer(id, bytes)).json);
    return sendOutcome(reply, runBody(operation, bytes, limits));
  });
}

/** The current operations' POST routes (docs/behaviour.md §2), under the prefix they are registered with. */
export const operationRoutes: FastifyPluginAsync<Answering> = async (app, answering) => {
  for (const id of CURRENT_OPERATION_IDS) postOperation(app, id, answering, {});
};

/** The current operations' GET routes, where the table has a path form (`/api/isEven/{number}`): they take no body. */
export const pathRoutes: FastifyPluginAsync<Answering> = async (app, answering) => {
  for (const id of CURRENT_OPERATION_IDS) {
    const operation = OPERATIONS[id] as Operation;
    const byPath = operation.byPath;
    if (byPath === undefined) continue;
    const large = operation.largeResult === true;
    const headers = answerHeaders(large);
    app.get(
      `${operation.path}/:number`,
      {
        ...ownHooks({ codedAnswers: answering.codesAnswers && large }),
        config: { countsAs: id, ...(large ? {} : NEVER_CODED), ...documentedPathValue(byPath.pattern) },
        schema: {
          operationId: `${id}ByPath`,
          summary: byPath.summary,
          description: byPath.description,
          tags: [operation.tag],
          response: {
            200: resultResponse(id, { ...headers, ...CACHEABLE_HEADERS }),
            // `type: 'null'`: a response without content, as @fastify/swagger writes it.
            304: {
              type: 'null',
              description: 'Not Modified: `If-None-Match` named this answer’s `ETag`; no body',
              headers: { ...headers, ...CACHEABLE_HEADERS },
            },
            ...problemResponses(
              { headers, badRequest: problemOf(400, BAD_URL_TEXT), path: `${app.prefix}${operation.path}/{number}`, allow: 'GET, HEAD, OPTIONS' },
              ...byPath.errors,
            ),
          },
        },
      },
      async (request, reply) => {
        // The router's value, always a string: documented (documentedPathValue), not validated again.
        const outcome = runPathValue(operation, (request.params as { number: string }).number, answering.limits);
        if (!('result' in outcome)) return sendProblem(reply, outcome.problem);
        return sendCacheable(request, reply, outcome.result.text);
      },
    );
  }
};
