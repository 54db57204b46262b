import Fastify, { LogController, type FastifyInstance, type FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import type { HttpMetrics } from './metrics.js';
import { problemOf } from '../../operations/problem.js';
import { sendProblem } from '../problem-responses.js';
import { ownHooks } from '../protocol/route-config.js';
import { NO_STORE } from '../protocol/caching.js';

/** What the process tells its probes and its streams: `ready` is cleared and `stopping` aborted when shutdown begins. */
export interface Lifecycle {
  ready: boolean;
  readonly stopping: AbortSignal;
  /** Begins shutdown: readiness off, running streams end with their last line, new ones are refused. */
  stop(): void;
}

/**
 * A lifecycle that is ready until `stop()`.
 *
 * @example
 * const lifecycle = createLifecycle(); lifecycle.stop(); lifecycle.stopping.aborted //=> true
 */
export function createLifecycle(): Lifecycle {
  const controller = new AbortController();
  return {
    ready: true,
    stopping: controller.signal,
    stop() {
      this.ready = false;
      controller.abort();
    },
  };
}

const StatusSchema = Type.Object({ status: Type.String() });
const probeConfig = { rateLimit: false, pressureHandler: () => undefined } as const;
// Probes and metrics tell the moment: no cache may keep them (a GET's 200 is heuristically cacheable, RFC 9111 §4.2.2).
const notKept = ownHooks({ headers: { 'cache-control': NO_STORE }, codedAnswers: false });
// Their answers are a few bytes: never compressed (answer-coding.ts).
const smallProbeConfig = { ...probeConfig, codedAnswers: false } as const;
// A readiness 503 during a drain is the service doing its job: logged as any answer, not as an error (access-log.ts).
const readinessConfig = { ...smallProbeConfig, expectedStatuses: [503] } as const;

/** What the probes read: whether to take traffic, and the metrics. */
export interface ProbeSources {
  ready(): boolean;
  readonly metrics: Pick<HttpMetrics, 'text' | 'contentType'>;
}

/**
 * `/healthz` (alive), `/readyz` (ready for traffic; 503 from the start of shutdown) and `/metrics`
 * (Prometheus text). Kept out of the OpenAPI document, which describes the operations. With
 * `codesAnswers` (the app compresses answers), `/metrics` says `Vary: Accept-Encoding`.
 */
export function registerProbes(app: FastifyInstance, sources: ProbeSources, codesAnswers = false): void {
  app.get('/healthz', { ...notKept, config: smallProbeConfig, schema: { hide: true, response: { 200: StatusSchema } } }, async () => ({ status: 'ok' }));
  app.get(
    '/readyz',
    {
      ...notKept,
      config: readinessConfig,
      schema: { hide: true, response: { 200: StatusSchema } },
    },
    async (_request, reply) =>
      sources.ready() ? { status: 'ready' } : sendProblem(reply, problemOf(503, 'The service is shutting down and takes no new traffic')),
  );
  app.get(
    '/metrics',
    { ...ownHooks({ headers: { 'cache-control': NO_STORE }, codedAnswers: codesAnswers }), config: probeConfig, schema: { hide: true } },
    async (_request, reply) => reply.type(sources.metrics.contentType).send(await sources.metrics.text()),
  );
}

/**
 * The admin port's app (`ADMIN_PORT`): the probes and `/metrics` alone, off the port callers reach.
 *
 * @example
 * const admin = await buildAdminApp({ ready: () => true, metrics }, app.serviceLog);
 * await admin.listen({ port: 9090 }); // GET /metrics, /healthz, /readyz
 */
export async function buildAdminApp(sources: ProbeSources, log: FastifyBaseLogger): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: log, logController: new LogController({ disableRequestLogging: true }) });
  app.setNotFoundHandler(async (request, reply) =>
    sendProblem(
      reply,
      problemOf(404, `There is no ${request.method} ${request.url.split('?')[0]} on the admin port; it serves /healthz, /readyz and /metrics`),
    ),
  );
  registerProbes(app, sources);
  await app.ready();
  return app;
}
