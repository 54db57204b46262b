import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { HttpMetrics } from './metrics.js';
import { problemOf, sendProblem } from '../problem.js';

/** What the process tells its probes: cleared when shutdown begins. */
export interface Lifecycle {
  ready: boolean;
}

const StatusSchema = Type.Object({ status: Type.String() });
const probeConfig = { rateLimit: false, pressureHandler: () => undefined } as const;

/**
 * `/healthz` (alive), `/readyz` (ready for traffic; 503 from the start of shutdown) and `/metrics`
 * (Prometheus text). Kept out of the OpenAPI document, which describes the operations.
 */
export function registerProbes(app: FastifyInstance, lifecycle: Lifecycle, metrics: HttpMetrics): void {
  app.get('/healthz', { config: probeConfig, schema: { hide: true, response: { 200: StatusSchema } } }, async () => ({ status: 'ok' }));
  app.get(
    '/readyz',
    {
      config: probeConfig,
      schema: { hide: true, response: { 200: StatusSchema } },
    },
    async (_request, reply) =>
      lifecycle.ready ? { status: 'ready' } : sendProblem(reply, problemOf(503, 'The service is shutting down and takes no new traffic')),
  );
  app.get('/metrics', { config: probeConfig, schema: { hide: true } }, async (_request, reply) => reply.type(metrics.contentType).send(await metrics.text()));
}
