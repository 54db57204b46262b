import type { FastifyInstance, FastifyPluginAsync, FastifyReply, RouteShorthandOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Limits } from './field-rules.js';
import { CURRENT_OPERATION_IDS, JsonText, OPERATIONS, type Operation, type OperationId } from './operation-table.js';
import { JSON_CONTENT_TYPE } from '../protocol/json-body.js';
import { jsonResponse, NumberParamsSchema, problemResponses } from './schemas.js';

/**
 * Route option for results of any size: native JSON.stringify writes a large array of strings or
 * values faster than a schema-compiled serializer, which checks each element against the schema,
 * and the handlers already return the exact shape.
 */
const serializeNatively = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) };

/** Sends an operation's answer: JSON text as it is, an object through the route's serializer. */
function sendAnswer(reply: FastifyReply, answer: object | JsonText): FastifyReply | object {
  return answer instanceof JsonText ? reply.type(JSON_CONTENT_TYPE).send(answer.text) : answer;
}

/** The 200 response of an operation, as the route's schema and the OpenAPI document give it. */
export const resultResponse = (operation: Operation) => jsonResponse(operation.resultDescription, operation.result);

/**
 * Registers `POST <path>` for an operation of the table: its id in the route's config (admission,
 * offloading, the number source), its body schema, its documented answers, and its answer.
 */
export function postOperation(app: FastifyInstance, id: OperationId, limits: Limits, schema: { response200: object; extra?: object }): void {
  const operation = OPERATIONS[id] as Operation;
  const options: RouteShorthandOptions = {
    ...(operation.largeResult === true ? serializeNatively : {}),
    config: { operation: id },
    schema: {
      operationId: id,
      summary: operation.summary,
      description: operation.description,
      tags: [operation.tag],
      ...schema.extra,
      body: operation.body,
      response: { 200: schema.response200, ...problemResponses(...operation.errors) },
    },
  };
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post(operation.path, options, async (request, reply) => sendAnswer(reply, operation.answer(request.body, { limits, numberSource: request.numberSource })));
}

/** The current operations (docs/behaviour.md §2), under the prefix they are registered with: one POST each, and a GET where the table has a path form. */
export const operationRoutes: FastifyPluginAsync<Limits> = async (app, limits) => {
  for (const id of CURRENT_OPERATION_IDS) {
    const operation = OPERATIONS[id] as Operation;
    postOperation(app, id, limits, { response200: resultResponse(operation) });
    const byPath = operation.byPath;
    if (byPath === undefined) continue;
    app.withTypeProvider<TypeBoxTypeProvider>().get(
      `${operation.path}/:number`,
      {
        config: { countsAs: id },
        schema: {
          operationId: `${id}ByPath`,
          summary: byPath.summary,
          description: byPath.description,
          tags: [operation.tag],
          params: NumberParamsSchema,
          response: { 200: resultResponse(operation), ...problemResponses(...byPath.errors) },
        },
      },
      async (request) => byPath.answer(request.params.number, limits),
    );
  }
};
