import type { FastifyPluginAsync } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { CURRENT_OPERATION_IDS } from '../../operations/index.js';
import { itemSchema } from '../../engine/items.js';
import { answerBatch, type BatchLimits } from '../../engine/batch.js';
import { codingHeaders, documentedRequest, jsonResponse, ProblemSchema, problemResponses } from './schemas.js';
import type { Answering } from './routes.js';
import { COSTLIEST_BYTES_PER_BYTE } from '../memory/estimates.js';
import { JSON_CONTENT_TYPE } from '../protocol/json-body.js';
import { SETTINGS } from '../../config.js';

/**
 * Many operations in one request, through the operation table like every single endpoint:
 * `POST /batch`, JSON in and JSON out (its NDJSON twin is stream-route.ts). It is admitted by
 * memory like any body (memory/admission.ts), by its estimated peak.
 */

const ITEM_SCHEMAS = CURRENT_OPERATION_IDS.map(itemSchema);
const ItemSchema = { anyOf: ITEM_SCHEMAS, description: 'An operation: its name in `operation`, beside the fields of its single endpoint’s body' };

const AnswerSchema = {
  anyOf: [
    Type.Object({ status: Type.Literal(200), result: Type.Unknown({ description: 'What the single endpoint answers with 200' }) }),
    Type.Object({ status: Type.Integer({ description: 'The status the single endpoint would answer' }), problem: ProblemSchema }),
  ],
  description: 'The answer to one operation: what its single endpoint answers with 200, or its problem',
} as unknown as TSchema;

const BatchBodySchema = {
  type: 'object',
  properties: {
    operations: {
      type: 'array',
      items: ItemSchema,
      description: `The operations, answered in this order; at most ${SETTINGS.batchMaxOperations.env} (${SETTINGS.batchMaxOperations.default} by default)`,
    },
  },
  required: ['operations'],
  'x-examples': {
    mixed: {
      summary: 'Several operations, one of them wrong',
      value: {
        operations: [
          { operation: 'isEven', input: 4 },
          { operation: 'sort', input: [3, 1, 2], order: 'desc' },
          { operation: 'isOdd', input: 'x' },
          { operation: 'stringSplit', input: { string: 'a,b', seperator: ',' } },
        ],
      },
    },
  },
} as unknown as TSchema;

const BatchAnswerSchema = Type.Object({ answers: Type.Array(AnswerSchema, { description: 'One per operation, in order' }) });

/** The batch route, under the prefix it is registered with. */
export const batchRoute: FastifyPluginAsync<Answering & { readonly limits: BatchLimits }> = async (app, answering) => {
  const { limits } = answering;
  app.post(
    '/batch',
    {
      config: { memory: { perByte: COSTLIEST_BYTES_PER_BYTE }, ...documentedRequest({ body: BatchBodySchema, headers: codingHeaders(true) }) },
      schema: {
        operationId: 'batch',
        summary: 'Answer many operations in one request',
        description:
          'Each operation is answered as its single endpoint would answer it, in order; a bad one gets its problem in its place ' +
          '(the single endpoint’s words, its pointers rooted at `/operations/N`) and never fails the others. Only a batch that is itself wrong is refused as a whole.',
        tags: ['batch'],
        response: { 200: jsonResponse('The answers, in the order of the operations', BatchAnswerSchema), ...problemResponses(400, 413, 415, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      // No body at all is an empty one: "The request body is empty; it must be …".
      const bytes = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
      if (bytes.length > answering.offloadBodyBytes) {
        const { json, tally } = await answering.pool.answer('batch', bytes);
        request.operationTally = tally;
        return reply.type(JSON_CONTENT_TYPE).send(json);
      }
      const { text, tally } = answerBatch(bytes, limits);
      request.operationTally = tally;
      return reply.type(JSON_CONTENT_TYPE).send(text);
    },
  );
};
