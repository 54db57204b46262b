import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { hasUnreadBody, lingerBeforeClosing, type LingerLimits } from './lingering-close.js';
import type { HttpMetrics } from './metrics.js';
import { problemOf, sendProblem } from './problem.js';

/** What the process tells its probes: cleared when shutdown begins. */
export interface Lifecycle {
  ready: boolean;
}

// An incoming X-Request-Id is kept when it is a plain token; anything else is replaced.
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** Fastify's `genReqId`: the client's `x-request-id` when sensible, else a new UUID. */
export function requestIdOf(request: { headers: Record<string, string | string[] | undefined> }): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

// A URL past this many characters is logged cut, with its full length: a 30 KB path value would
// otherwise make every log line 30 KB (log shippers commonly cap lines at 16 KiB).
export const LOGGED_URL_MAX = 1024;

function loggedUrl(url: string): string {
  return url.length <= LOGGED_URL_MAX ? url : `${url.slice(0, LOGGED_URL_MAX)}…(${url.length} characters)`;
}

/**
 * One log line per request, with its id, route, status and time; the id goes back in
 * `x-request-id`; every response is counted in the metrics; once shutdown begins every
 * response says `Connection: close`, so clients stop reusing the connection; and an answer sent
 * before the body has arrived closes its connection only after a lingering read of the rest.
 */
export function observeRequests(app: FastifyInstance, metrics: HttpMetrics, shuttingDown: () => boolean, linger: LingerLimits): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (hasUnreadBody(request.raw)) {
      // Answered before the whole body arrived: the connection cannot be reused, and must not be
      // closed before the client has finished sending and can read the answer.
      reply.header('connection', 'close');
      lingerBeforeClosing(request.raw, linger);
    } else if (shuttingDown()) {
      reply.header('connection', 'close');
    }
    done(null, payload);
  });
  const log = app.log;
  app.addHook('onResponse', (request: FastifyRequest, reply, done) => {
    const route = request.routeOptions.url;
    const milliseconds = reply.elapsedTime;
    metrics.observe(request.method, route, reply.statusCode, milliseconds / 1000);
    // The root logger with the id as a field: the same line as the request's child would write, without making one.
    log.info(
      { requestId: request.id, method: request.method, url: loggedUrl(request.url), route, status: reply.statusCode, ms: Math.round(milliseconds * 100) / 100 },
      'request',
    );
    done();
  });
}

const StatusSchema = Type.Object({ status: Type.String() });
const probeConfig = { rateLimit: false, pressureHandler: () => undefined } as const;

/**
 * `/healthz` (alive), `/readyz` (ready for traffic; 503 from the start of shutdown) and `/metrics`
 * (Prometheus text). Kept out of the OpenAPI document, which describes the operations.
 */
export function registerProbes(app: FastifyInstance, lifecycle: Lifecycle, metrics: HttpMetrics): void {
  app.get(
    '/healthz',
    { config: probeConfig, schema: { hide: true, response: { 200: StatusSchema } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      config: probeConfig,
      schema: { hide: true, response: { 200: StatusSchema } },
    },
    async (_request, reply) =>
      lifecycle.ready ? { status: 'ready' } : sendProblem(reply, problemOf(503, 'The service is shutting down and takes no new traffic')),
  );
  app.get(
    '/metrics',
    { config: probeConfig, schema: { hide: true } },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()),
  );
}
