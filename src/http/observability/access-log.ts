import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccessLog } from '../../config.js';
import type { HttpMetrics } from './metrics.js';

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
function countOperations(request: FastifyRequest, status: number, metrics: HttpMetrics): void {
  const tally = request.operationTally;
  if (tally !== undefined) {
    for (const [key, n] of Object.entries(tally)) {
      const [operation = '', answered = ''] = key.split(' ');
      metrics.countOperation(operation, answered, n);
    }
    return;
  }
  const { countsAs } = request.routeOptions.config;
  if (countsAs !== undefined) metrics.countOperation(countsAs, status);
}

/**
 * Every answer is counted in the metrics (by method, route template and status, with its
 * latency); some get an access-log line with its id, method, url, route, status and time: every
 * 5xx (level error) and every answer slower than `SLOW_REQUEST_MS` (level warn), whatever the
 * policy, and those `ACCESS_LOG` chooses (level info).
 */
export function logAndCountAnswers(app: FastifyInstance, metrics: HttpMetrics, policy: AccessLog, slowRequestMs: number): void {
  const chosen = chosenBy(policy);
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    const route = request.routeOptions.url;
    const status = reply.statusCode;
    const milliseconds = reply.elapsedTime;
    metrics.observe(request.method, route, status, milliseconds / 1000);
    countOperations(request, status, metrics);
    const level = status >= 500 ? 'error' : milliseconds >= slowRequestMs ? 'warn' : chosen(status) ? 'info' : undefined;
    // The request's own logger: its id, and its trace while tracing is on (tracing.ts).
    if (level !== undefined) {
      request.log[level]({ method: request.method, url: loggedUrl(request.url), route, status, ms: Math.round(milliseconds * 100) / 100 }, 'request');
    }
    done();
  });
}
