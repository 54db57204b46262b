import type { FastifyPluginAsync } from 'fastify';
import { answerBatch, type BatchLimits } from '../../engine/batch.js';
import { answerHeaders, codingHeaders, documentedRequest, jsonResponse, problemResponses } from './schemas.js';
import { BatchAnswerSchema, BatchRequestSchema } from './batch-schemas.js';
import type { Answering } from './routes.js';
import { ownHooks } from '../protocol/route-config.js';
import { DEFAULT_CONFIG } from '../../config.js';
import { BODY_ERRORS } from '../../operations/define.js';
import { ProblemError, type Problem } from '../../operations/problem.js';
import { COSTLIEST_BYTES_PER_BYTE } from '../memory/estimates.js';
import { JSON_CONTENT_TYPE } from '../protocol/json-body.js';

/**
 * Many operations in one request, through the operation table like every single endpoint:
 * `POST /batch`, JSON in and JSON out (its NDJSON twin is stream-route.ts). It is admitted by
 * memory like any body (memory/memory-admission.ts), by its estimated peak.
 */

/** What the batch answers an empty object: its 400 example. */
function answerOfEmptyBatch(): Problem {
  try {
    answerBatch(Buffer.from('{}'), DEFAULT_CONFIG);
  } catch (error) {
    if (error instanceof ProblemError) return error.problem;
    throw error;
  }
  throw new Error('the batch answers {} with 200: its 400 example needs another body');
}

/** The batch route, under the prefix it is registered with. */
export const batchRoute: FastifyPluginAsync<Answering & { readonly limits: BatchLimits }> = async (app, answering) => {
  const { limits } = answering;
  app.post(
    '/batch',
    {
      ...ownHooks({ codedAnswers: answering.codesAnswers }),
      config: { memory: { perByte: COSTLIEST_BYTES_PER_BYTE }, ...documentedRequest({ body: BatchRequestSchema, headers: codingHeaders(true) }) },
      schema: {
        operationId: 'batch',
        summary: 'Answer many operations in one request',
        description:
          'Each operation is answered as its single endpoint would answer it, in order; a bad one gets its problem in its place ' +
          '(the single endpoint’s words, its pointers rooted at `/operations/N`) and never fails the others. Only a batch that is itself wrong is refused as a whole.',
        tags: ['batch'],
        response: {
          200: jsonResponse('The answers, in the order of the operations', BatchAnswerSchema, answerHeaders(true)),
          ...problemResponses(
            { headers: answerHeaders(true), badRequest: answerOfEmptyBatch(), path: `${app.prefix}/batch`, allow: 'OPTIONS, POST' },
            ...BODY_ERRORS,
          ),
        },
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
