import { randomBytes } from 'node:crypto';
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AccessLog } from '../../config.js';
import type { ServerResponse } from 'node:http';
import type { ClientGoneStage, HttpMetrics } from './metrics.js';
import { tallied } from '../../engine/items.js';
import { routeConfigOf } from '../protocol/route-config.js';

// An incoming X-Request-Id is kept when it is a plain token; anything else is replaced.
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

// A random prefix per process and a counter: unique across processes and restarts as far as
// correlating log lines needs (2^72 prefixes), for the cost of an addition instead of a UUID.
const ID_PREFIX = randomBytes(9).toString('base64url');
let lastId = 0;

/**
 * Fastify's `genReqId`: the client's `x-request-id` when sensible, else this process's prefix and
 * a counter.
 *
 * @example
 * requestIdOf({ headers: {} })                            //=> 'Xb2kq0V8Ez1a-1f' (prefix, counter in base 36)
 * requestIdOf({ headers: { 'x-request-id': 'trace-9' } }) //=> 'trace-9'
 */
export function requestIdOf(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : `${ID_PREFIX}-${(++lastId).toString(36)}`;
}

// A URL past this many characters is logged cut, with its full length: a 30 KB path value would
// otherwise make every log line 30 KB (log shippers commonly cap lines at 16 KiB).
export const LOGGED_URL_MAX = 1024;

function loggedUrl(url: string): string {
  return url.length <= LOGGED_URL_MAX ? url : `${url.slice(0, LOGGED_URL_MAX)}…(${url.length} characters)`;
}

/** Whether `ACCESS_LOG` asks for a line for this answer (5xx and slow ones are logged whatever it says). */
function chosenBy(policy: AccessLog): (status: number) => boolean {
  switch (policy.mode) {
    case 'all':
      return () => true;
    case 'errors':
      return (status) => status >= 400;
    case 'minimal':
      return () => false;
    case 'sample': {
      let seen = 0;
      return () => ++seen % policy.every === 0;
    }
  }
}

/** The operations a request answered: those of its batch or stream, or its one operation. */
function countOperations(request: FastifyRequest, config: FastifyContextConfig, status: number, metrics: HttpMetrics): void {
  const tally = request.operationTally;
  if (tally !== undefined) {
    for (const [operation, answered, n] of tallied(tally)) metrics.countOperation(operation, answered, n);
    return;
  }
  if (config.countsAs !== undefined) metrics.countOperation(config.countsAs, status);
}

/** The stage a request had reached when its connection closed before its answer was flushed whole. */
function stageOf(response: ServerResponse): ClientGoneStage {
  return !response.req.complete ? 'upload' : response.headersSent ? 'answer' : 'waiting';
}

// "The connection", not "the client": the service also closes it on a client that stops reading a stream (STREAM_IDLE_TIMEOUT_MS).
const GONE_REASONS: Readonly<Record<ClientGoneStage, string>> = {
  upload: 'the connection closed before the request body arrived',
  waiting: 'the connection closed while the answer was being made',
  answer: 'the connection closed before the answer was written whole',
};

export interface AccessLogOptions {
  readonly metrics: HttpMetrics;
  readonly policy: AccessLog;
  readonly slowRequestMs: number;
}

/**
 * The `access-log` plugin: every answer is counted in the metrics (by method, route template and status, with its
 * latency); some get an access-log line with its id, method, url, route, status and time: every
 * 5xx (level error) and every answer slower than `SLOW_REQUEST_MS` (level warn), whatever the
 * policy, and those `ACCESS_LOG` chooses (level info). A 5xx its route expects (`/readyz`'s 503
 * during a drain) or refused on purpose (`refusedOnPurpose`: a drain's new stream, overload control)
 * is not a failure: it is logged as any other answer. A client that goes away
 * before its answer is flushed (an aborted upload, its own timeout, a reset) is the client's
 * doing: one line at level info with the stage and the reason, no stack, counted in
 * `http_clients_gone_total`.
 *
 * @example
 * await app.register(accessLog, { metrics, policy: { mode: 'errors' }, slowRequestMs: 1000 });
 */
export const accessLog = fp<AccessLogOptions>(
  async (app, { metrics, policy, slowRequestMs }) => {
    const chosen = chosenBy(policy);
    app.connections.whenClientGoes((response) => {
      const stage = stageOf(response);
      metrics.countClientGone(stage);
      const { method = '', url = '', headers } = response.req;
      const id = headers['x-request-id'];
      const line = {
        ...(typeof id === 'string' && REQUEST_ID.test(id) ? { requestId: id } : {}),
        method,
        url: loggedUrl(url),
        stage,
        reason: GONE_REASONS[stage],
      };
      app.serviceLog.info(line, 'client went away');
    });
    app.addHook('onResponse', function logAnswer(request: FastifyRequest, reply, done) {
      const config = routeConfigOf(request);
      const route = config.url;
      const status = reply.statusCode;
      const milliseconds = reply.elapsedTime;
      metrics.observe(request.method, route, status, milliseconds / 1000);
      countOperations(request, config, status, metrics);
      const failed = status >= 500 && config.expectedStatuses?.includes(status) !== true && request.refusedOnPurpose !== true;
      const level = failed ? 'error' : milliseconds >= slowRequestMs ? 'warn' : chosen(status) ? 'info' : undefined;
      // The request's own logger: its id, and its trace while tracing is on (tracing.ts).
      if (level !== undefined) {
        request.log[level]({ method: request.method, url: loggedUrl(request.url), route, status, ms: Math.round(milliseconds * 100) / 100 }, 'request');
      }
      done();
    });
  },
  {
    name: 'access-log',
    fastify: '5.x',
    dependencies: ['connections', 'route-config'],
    decorators: { fastify: ['connections', 'serviceLog'], request: ['operationTally', 'routeConfig'] },
  },
);
