import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { InputError, toJsonPointer } from '../core/index.js';
import { LIMIT_TEXTS } from './limit-texts.js';
import { announceCloseIfBodyUnread } from './protocol/lingering-close.js';
import { isExemptFromRequestTimeout } from './protocol/request-timeout.js';

/** One offending field of the request body, as a JSON Pointer (RFC 6901). */
export interface FieldError {
  pointer: string;
  detail: string;
}

/** RFC 9457 Problem Details. `type` is always `about:blank`, so `title` is the status phrase (§4.2.1). */
export interface Problem {
  type: 'about:blank';
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** An error that becomes exactly this problem response. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly errors?: FieldError[],
    /** Headers the answer carries, such as `retry-after` on a 503. */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(detail);
  }
}

// RFC 9110 §15 names some statuses differently from Node's table.
const TITLES: Readonly<Record<number, string>> = { 413: 'Content Too Large', 422: 'Unprocessable Content' };

export function problemOf(status: number, detail: string, errors?: FieldError[]): Problem {
  const problem: Problem = { type: 'about:blank', title: TITLES[status] ?? STATUS_CODES[status] ?? 'Error', status, detail };
  if (errors !== undefined && errors.length > 0) problem.errors = errors;
  return problem;
}

/** The 400 (or given status) for one bad field; `detail` names the field. */
export function fieldProblem(pointer: string, message: string, status = 400): ProblemError {
  const detail = `${pointer === '' ? 'The request body' : pointer} ${message}`;
  return new ProblemError(status, detail, [{ pointer, detail }]);
}

/** Runs a core operation, turning its `InputError` into a problem about the field at `pointer`. */
export function fromCore<T>(pointer: string, operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof InputError) throw fieldProblem(toJsonPointer(error.path, pointer), error.message);
    throw error;
  }
}

/**
 * Sends a problem answer. One sent before the request's body has all arrived (405, 404, 413, 429,
 * 503, any early error) says `Connection: close` (protocol/lingering-close.ts).
 */
export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  announceCloseIfBodyUnread(reply.request.raw, reply);
  reply.raw.statusMessage = problem.title; // the status line says what the body's title says
  // Sent as a string so that no route's response schema reshapes it.
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** One error of ajv's, as Fastify's validation reports it. */
export interface ValidationError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: Record<string, unknown>;
  /** The value validated at `instancePath` (ajv's `verbose`). */
  data?: unknown;
}

/** For a missing field: the fields sent beside it that the object does not have, most likely a misspelling of it. */
function unknownFieldsBeside(error: ValidationError, body: string): string {
  const { data } = error;
  const properties = error.parentSchema?.properties;
  if (typeof data !== 'object' || data === null || Array.isArray(data) || typeof properties !== 'object' || properties === null) return '';
  const unknown = Object.keys(data).filter((key) => !Object.hasOwn(properties, key));
  if (unknown.length === 0) return '';
  const where = error.instancePath === '' ? body : error.instancePath;
  const names =
    unknown
      .slice(0, 5)
      .map((key) => JSON.stringify(key))
      .join(', ') + (unknown.length > 5 ? ', …' : '');
  return `; ${where} has ${names}, which ${unknown.length === 1 ? 'is not one of its fields' : 'are not among its fields'}`;
}

/** The words a schema gives for what a field accepts (`x-expected`), used in error details. */
export const EXPECTED = 'x-expected';

/** The 400 for a body that its schema refuses; `body` is what the body is called (an item of a batch is `the item`). */
export function validationProblem(errors: readonly ValidationError[], body = 'the body'): Problem {
  const byPointer = new Map<string, FieldError & { fromSchema: boolean }>();
  for (const error of errors) {
    const missing = error.keyword === 'required' ? String(error.params.missingProperty) : undefined;
    const pointer = missing === undefined ? error.instancePath : toJsonPointer([missing], error.instancePath);
    const expected = error.parentSchema?.[EXPECTED];
    const message =
      missing !== undefined
        ? `is required${unknownFieldsBeside(error, body)}`
        : typeof expected === 'string'
          ? `must be ${expected}`
          : (error.message ?? 'is invalid');
    const fromSchema = missing !== undefined || typeof expected === 'string';
    const known = byPointer.get(pointer);
    if (known === undefined || (!known.fromSchema && fromSchema)) {
      byPointer.set(pointer, { pointer, detail: `${pointer === '' ? 'The request body' : pointer} ${message}`, fromSchema });
    }
  }
  const fieldErrors = [...byPointer.values()].map(({ pointer, detail }) => ({ pointer, detail }));
  return problemOf(400, fieldErrors.map((e) => e.detail).join('; '), fieldErrors);
}

const STREAM_MEDIA_TYPE = 'The stream must be NDJSON, one JSON object per line, sent with Content-Type: application/x-ndjson';

const FRAMEWORK_PROBLEMS: Readonly<Record<string, readonly [number, string]>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'The request body must be JSON, sent with Content-Type: application/json (charset utf-8, if given)'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'The Content-Length header does not match the body sent'],
  FST_ERR_BAD_URL: [400, 'The request path is not a valid URL: it has a malformed percent-encoding'],
  FST_UNDER_PRESSURE: [503, LIMIT_TEXTS.overloaded],
};

/** Maps any error thrown while handling a request to its problem; never leaks internals of a 5xx. */
/** The limits an error text may name. */
export interface ProblemLimits {
  readonly bodyLimit: number;
  readonly numberTextLimit: number;
}

export function toProblem(error: unknown, limits: ProblemLimits): Problem {
  if (error instanceof ProblemError) return problemOf(error.status, error.message, error.errors);
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
  return problemOf(500, 'The server failed to handle this request; the failure has been logged');
}

export function problemErrorHandler(limits: ProblemLimits) {
  return function handleError(this: unknown, error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    let problem = toProblem(error, limits);
    if (problem.status === 415 && request.routeOptions.config.operation === 'stream') problem = problemOf(415, STREAM_MEDIA_TYPE);
    if (problem.status >= 500 && problem.status !== 503) request.log.error({ err: error }, 'request failed');
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
