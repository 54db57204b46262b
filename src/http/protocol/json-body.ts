import type { FastifyBodyParser } from 'fastify';
import { ProblemError } from '../../operations/problem.js';

/** The media type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const UTF8_CHARSET = /^\s*"?utf-?8"?\s*$/i;

/**
 * Fastify's `application/json` parser, in the callback form (an async parser costs a promise per
 * request): it refuses a `charset` other than UTF-8 (RFC 8259 §8.1) with 415 and hands the body on
 * as its bytes, which the route's operation reads itself (engine/run.ts), on the event loop or,
 * when large, in a worker thread.
 *
 * @example
 * app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser);
 */
export const jsonBodyParser: FastifyBodyParser<Buffer> = (request, bytes, done) => {
  const charset = /;\s*charset\s*=([^;]*)/i.exec(request.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !UTF8_CHARSET.test(charset)) {
    return done(new ProblemError(415, `The request body must be UTF-8 JSON; charset ${charset.trim()} is not accepted`), undefined);
  }
  done(null, bytes);
};
