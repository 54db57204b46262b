import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemOf, validationProblem, type Problem, type ValidationError } from '../operations/problem.js';
import { LIMIT_TEXTS } from '../operations/limit-texts.js';
import { announceCloseIfBodyUnread } from './protocol/lingering-close.js';
import { isExemptFromRequestTimeout } from './protocol/request-timeout.js';
import { routeConfigOf } from './protocol/route-config.js';
import { NO_STORE } from './protocol/caching.js';

/**
 * Sends a problem answer. One sent before the request's body has all arrived (405, 404, 413, 429,
 * 503, any early error) says `Connection: close` (protocol/lingering-close.ts). It carries the
 * route's own headers (a legacy route's `Deprecation`), which a hook of the route writes
 * (route-config.ts): also when an app-wide hook answers before that one runs (a 503 of overload
 * control), as every answer of a legacy route carries them (docs/behaviour.md §4). `keepAlive`:
 * the connection stays open and Node reads and drops the rest of the body (overload control's 503).
 */
export function sendProblem(reply: FastifyReply, problem: Problem, { keepAlive = false } = {}): FastifyReply {
  if (!keepAlive) announceCloseIfBodyUnread(reply.request.raw, reply);
  const routeHeaders = routeConfigOf(reply.request).headers;
  if (routeHeaders !== undefined) reply.headers(routeHeaders);
  // Also where no hook ran (a URL the router refused): a problem depends on settings or load (caching.ts).
  reply.header('cache-control', NO_STORE);
  reply.raw.statusMessage = problem.title; // the status line says what the body's title says
  // Sent as a string so that no route's response schema reshapes it.
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** The 415 of a route that takes JSON. */
export const MEDIA_TYPE_TEXT = 'The request body must be JSON, sent with Content-Type: application/json (charset utf-8, if given)';
/** Every 5xx but a 503: nothing internal is disclosed. */
export const FAILURE_TEXT = 'The server failed to handle this request; the failure has been logged';
/** A path that is not a valid URL. */
export const BAD_URL_TEXT = 'The request path is not a valid URL: it has a malformed percent-encoding';

const FRAMEWORK_PROBLEMS: Readonly<Record<string, readonly [number, string]>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, MEDIA_TYPE_TEXT],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'The Content-Length header does not match the body sent'],
  FST_ERR_BAD_URL: [400, BAD_URL_TEXT],
};

/** The limits an error text may name. */
export interface ProblemLimits {
  readonly bodyLimit: number;
  readonly numberTextLimit: number;
}

/** Maps any error thrown while handling a request to its problem; never leaks internals of a 5xx. */
export function toProblem(error: unknown, limits: ProblemLimits): Problem {
  if (error instanceof ProblemError) return error.problem;
  const fastifyError = error as Partial<FastifyError> & { validation?: ValidationError[] };
  if (Array.isArray(fastifyError.validation)) return validationProblem(fastifyError.validation);
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return problemOf(413, LIMIT_TEXTS.body(limits.bodyLimit));
  }
  if (fastifyError.code === 'FST_ERR_MAX_PARAM_LENGTH') return problemOf(414, LIMIT_TEXTS.pathValue(limits.numberTextLimit));
  const framework = fastifyError.code === undefined ? undefined : FRAMEWORK_PROBLEMS[fastifyError.code];
  if (framework !== undefined) return problemOf(...framework);
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return problemOf(status, fastifyError.message ?? STATUS_CODES[status] ?? 'Client error');
  }
  return problemOf(500, FAILURE_TEXT);
}

export function problemErrorHandler(limits: ProblemLimits) {
  return function handleError(this: unknown, error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    let problem = toProblem(error, limits);
    const mediaType = routeConfigOf(request).mediaTypeProblem;
    if (problem.status === 415 && mediaType !== undefined) problem = problemOf(415, mediaType);
    // An answer's stream that fails because its client went away (a premature close) is no failure
    // of the service: the access log has a line for it already (observability/access-log.ts).
    const clientGone = request.raw.socket?.destroyed === true;
    if (problem.status >= 500 && problem.status !== 503 && !clientGone) request.log.error({ err: error }, 'request failed');
    if (error instanceof ProblemError && error.headers !== undefined) reply.headers(error.headers);
    return sendProblem(reply, problem);
  };
}

const CLIENT_ERRORS: Readonly<Record<string, readonly [number, string]>> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, LIMIT_TEXTS.requestTimeout],
  HPE_HEADER_OVERFLOW: [431, LIMIT_TEXTS.headers],
};

// How long a connection answered for a client error may stay half-closed while the client reads the answer.
export const CLIENT_ERROR_CLOSE_MS = 1_000;

/**
 * Errors Node raises before a request exists (a malformed request line, oversized headers, a
 * timeout): answered on the raw socket, as problem+json like every other error, with
 * `Connection: close`. The socket is ended, not destroyed: destroying it with unread input would
 * reset the connection and lose the answer. One whose client does not close goes after a second.
 */
export function writeClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && isExemptFromRequestTimeout(socket)) return;
  if (!socket.writable) return void socket.destroy();
  const [status, detail] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'The request is not valid HTTP/1.1'];
  const problem = problemOf(status, detail);
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), CLIENT_ERROR_CLOSE_MS).unref();
}
