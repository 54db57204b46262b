import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { DEFAULT_CONFIG, type Config } from './config.js';
import { budgetMetrics, memoryAdmission } from './http/memory/memory-admission.js';
import { memorySetup } from './http/memory/memory-setup.js';
import { AJV_CUSTOM_OPTIONS } from './engine/validation.js';
import { answerOtherMethods, recordRoutes } from './http/protocol/allowed-methods.js';
import { jsonBodyParser } from './http/protocol/json-body.js';
import { contentCoding } from './http/protocol/content-coding.js';
import { answerCoding } from './http/protocol/answer-coding.js';
import { routeConfig } from './http/protocol/route-config.js';
import { registerOpenApi } from './http/operations/openapi.js';
import { DEFAULT_PREFIX } from './operations/index.js';
import { problemOf } from './operations/problem.js';
import { problemErrorHandler, sendProblem, toProblem, writeClientError } from './http/problem-responses.js';
import { legacyRoutes } from './http/operations/legacy-routes.js';
import { operationRoutes, pathRoutes } from './http/operations/routes.js';
import { batchRoute } from './http/operations/batch-route.js';
import { streamRoute } from './http/operations/stream-route.js';
import { connections } from './http/protocol/connections.js';
import { counterOf, createHttpMetrics } from './http/observability/metrics.js';
import { accessLog, requestIdOf } from './http/observability/access-log.js';
import { createLifecycle, registerProbes } from './http/observability/probes.js';
import { protection } from './http/protocol/protection.js';
import { API_HEADERS } from './http/protocol/security-headers.js';
import { allowOrigins, fixedCorsHeaders, responseHeaders } from './http/protocol/response-headers.js';
import { droppedLogLines } from './http/observability/log-destination.js';
import { serviceLogger, type LoggerSetting } from './http/observability/service-logger.js';
import { requestLogger } from './http/observability/request-logger.js';
import type { Tracing } from './http/observability/tracing.js';
// The route config keys and decorations every plugin shares, declared once.
import type {} from './http/decorations.js';

const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

export interface BuildOptions {
  /** Path under which the current operations, `/openapi.json` and `/docs` are served; `/api` by default. */
  readonly prefix?: string;
  /** The service's logger; pino at `config.logLevel` in `config.logFormat` by default, none with `false`. */
  readonly logger?: LoggerSetting;
  /** Bytes requests may reserve in all, instead of what MEMORY_LIMIT leaves this process (for tests). */
  readonly memoryCapacity?: number;
  /** OpenTelemetry's span per request (http/observability/tracing.ts), when tracing is on. */
  readonly tracing?: Pick<Tracing, 'requests'>;
}

/**
 * Builds the service (not yet listening) from a configuration; anything not given takes its
 * default. Tests use this same factory with the production options.
 *
 * @example
 * const app = await buildApp({ bodyLimit: 1024 });
 * const response = await app.inject({ method: 'GET', url: '/api/isEven/4' }); // {"ret":true}
 */
export async function buildApp(overrides: Partial<Config> = {}, options: BuildOptions = {}): Promise<FastifyInstance> {
  const config: Config = { ...DEFAULT_CONFIG, ...overrides };
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (!/^(\/[\w.~-]+)+$/.test(prefix)) throw new TypeError(`prefix must look like "/api" or "/tools/json", not ${JSON.stringify(prefix)}`);
  // A path value may be percent-encoded: up to three bytes per character of number text.
  const longestPathValue = 3 * config.numberTextLimit + 64;

  const app = Fastify({
    // No logger of Fastify's: the service's is `app.serviceLog`, and each request's is set by the
    // request-logger plugin (request-logger.ts says why).
    logger: false,
    // Access-log lines come from access-log.ts, as ACCESS_LOG says, instead of Fastify's two per request.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: config.bodyLimit,
    http: {
      // The request line counts toward Node's header limit (16 KiB by default): make room for the longest path value.
      maxHeaderSize: 16 * 1024 + longestPathValue,
      // A client that stalls while sending headers (slowloris) is cut off after this (docs/behaviour.md §3).
      headersTimeout: config.headersTimeoutMs,
      // Node enforces the header and request timeouts on this tick (30 s by default, coarser than they are).
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: longestPathValue },
    // A client that takes longer than this to send its whole request, body included, gets 408.
    requestTimeout: config.requestTimeoutMs,
    // Idle keep-alive connections close after this; above the 60 s idle timeout of common load balancers,
    // so that the balancer, not the service, closes first and never reuses a closing connection.
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: 0, // no socket inactivity timeout on top of the two above
    // __proto__ and constructor are ordinary keys (docs/behaviour.md); our parser never assigns them.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    ajv: { customOptions: AJV_CUSTOM_OPTIONS },
    frameworkErrors: (error, _request, reply) => void sendProblem(reply, toProblem(error, config)),
    clientErrorHandler: writeClientError,
  });
  app.setErrorHandler(problemErrorHandler(config));
  app.setNotFoundHandler(async (request, reply) =>
    sendProblem(reply, problemOf(404, `There is no ${request.method} ${request.url.split('?')[0]}; the operations are listed at ${prefix}/docs`)),
  );
  // The request's path, one named plugin a step, in the order their hooks run (README, Architecture);
  // each names those it needs before it, and Fastify refuses to start when one is missing.
  app.decorate('serviceLog', serviceLogger(config, options.logger));
  await app.register(connections, config);
  // The first onRequest hook: every later one, and Fastify's own messages about the request, log with the request id.
  await app.register(requestLogger, { root: app.serviceLog });
  // Filled by the batch and stream routes, read when the answer ends (access-log, tracing): decorated before both.
  app.decorateRequest('operationTally', undefined);
  // Set by the stream route (the drain) and protection (overload control), read by access-log.
  app.decorateRequest('refusedOnPurpose', undefined);
  // Before any other hook, so that a request's span covers them all.
  if (options.tracing !== undefined) await app.register(options.tracing.requests);
  const lifecycle = createLifecycle();
  app.decorate('lifecycle', lifecycle);
  const memory = memorySetup(config, options.memoryCapacity);
  app.decorate('memory', memory);
  app.addHook('onClose', () => memory.pool.close());
  const metrics = createHttpMetrics();
  app.decorate('metrics', metrics);
  for (const metric of budgetMetrics(memory.budget, memory.limit)) metrics.register(metric);
  metrics.register(
    counterOf('log_lines_dropped_total', 'Log lines dropped because standard output did not take them in time (LOG_BACKLOG_BYTES)', droppedLogLines),
  );
  await app.register(routeConfig);
  const fixedCors = fixedCorsHeaders(config.corsOrigins);
  // CORS headers that depend on the request's Origin (a list of origins), by @fastify/cors: its Vary comes first.
  if (fixedCors === undefined) await allowOrigins(app, config.corsOrigins);
  await app.register(responseHeaders, {
    always: { ...(config.securityHeaders === 'on' ? API_HEADERS : {}), ...fixedCors },
    // From the first moment of shutdown, responses ask clients to reconnect: new connections still
    // reach this process during the drain delay, and by the close few keep-alive ones are left.
    shuttingDown: () => !lifecycle.ready,
  });
  await app.register(accessLog, { metrics, policy: config.accessLog, slowRequestMs: config.slowRequestMs });
  await app.register(answerCoding, { minBytes: config.compressMinBytes });
  await app.register(protection, config);
  // JSON is the only media type taken (docs/behaviour.md): Fastify's text/plain parser goes too.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser);

  const routes = recordRoutes(app);
  const codesAnswers = config.compressMinBytes !== 'off';
  await registerOpenApi(app, { prefix, securityHeaders: config.securityHeaders === 'on', codesAnswers });
  // With ADMIN_PORT the probes and metrics are served there instead (server/listen.ts).
  if (config.adminPort === 'off') registerProbes(app, { ready: () => lifecycle.ready, metrics }, codesAnswers);
  const answering = { limits: config, offloadBodyBytes: config.offloadBodyBytes, pool: memory.pool, codesAnswers };
  // The routes that take a body, in a context of their own whose hooks run before the body is read:
  // the memory admission, then the body's decoding. Other requests (GET, probes, 404s) run neither.
  await app.register(async function bodyRoutes(bodies) {
    await bodies.register(memoryAdmission, {
      budget: memory.budget,
      memoryLimit: memory.limit,
      bodyLimit: config.bodyLimit,
      offloadBodyBytes: config.offloadBodyBytes,
      admissionWaitMs: config.admissionWaitMs,
    });
    await bodies.register(contentCoding, { bodyLimit: config.bodyLimit });
    await bodies.register(operationRoutes, { prefix, ...answering });
    await bodies.register(batchRoute, { prefix, ...answering });
    await bodies.register(streamRoute, { prefix, ...answering, stopping: lifecycle.stopping });
    if (config.legacyRoutes === 'on') {
      await bodies.register(legacyRoutes, {
        ...answering,
        successorPrefix: prefix,
        legacyDeprecationDate: config.legacyDeprecationDate,
        legacySunset: config.legacySunset,
      });
    }
  });
  await app.register(pathRoutes, { prefix, ...answering });
  if (fixedCors === undefined) {
    answerOtherMethods(app, routes);
  } else {
    // Fixed CORS headers come with the others; @fastify/cors answers the preflights, on the OPTIONS routes alone.
    await app.register(async (preflights) => {
      await allowOrigins(preflights, config.corsOrigins);
      answerOtherMethods(app, routes, preflights);
    });
  }
  return app;
}
