import pino from 'pino';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { DEFAULT_CONFIG, type Config } from './config.js';
import { answerOtherMethods, recordRoutes } from './http/allowed-methods.js';
import { enableCors } from './http/cors.js';
import { createJsonBodyParser } from './http/json-body.js';
import { DEFAULT_PREFIX, registerOpenApi } from './http/openapi.js';
import { EXPECTED, problemErrorHandler, problemOf, sendProblem, toProblem, writeClientError } from './http/problem.js';
import { legacyRoutes, markLegacyResponses } from './http/legacy.js';
import { operationRoutes } from './http/routes.js';
import { drainGracefully } from './http/drain.js';
import { createHttpMetrics } from './http/metrics.js';
import { observeRequests, registerProbes, requestIdOf, type Lifecycle } from './http/operations.js';
import { protect } from './http/protection.js';
import { lazyChildLogger } from './http/request-logger.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Set `ready` to false when shutdown begins: `/readyz` then answers 503. */
    lifecycle: Lifecycle;
  }
}

const CONNECTIONS_CHECKING_INTERVAL_MS = 1000;

export interface BuildOptions {
  /** Path under which the current operations, `/openapi.json` and `/docs` are served; `/api` by default. */
  readonly prefix?: string;
  /** Fastify's logger option; defaults to pino at `config.logLevel` in `config.logFormat`. */
  readonly logger?: FastifyServerOptions['logger'];
}

function loggerFor(config: Config): FastifyServerOptions['logger'] {
  const base = { level: config.logLevel } as const;
  if (config.logFormat === 'pretty') return { ...base, transport: { target: 'pino-pretty' } };
  return config.logFlushMs === 0 ? base : { ...base, stream: bufferedStdout(config.logFlushMs) };
}

// One write(2) per log line costs a system call per request (about a tenth of S2's throughput in
// an ad-hoc wrk A/B); lines are gathered up to this size instead, and written at least every LOG_FLUSH_MS.
const LOG_BUFFER_BYTES = 4096;
const stdoutStreams = new Map<number, pino.DestinationStream>();

/**
 * Standard output through a buffer, one per process and interval, however many apps are built.
 * pino writes what is left synchronously when the process exits, crash or not (SIGKILL excepted).
 */
function bufferedStdout(flushMs: number): pino.DestinationStream {
  let stream = stdoutStreams.get(flushMs);
  if (stream === undefined) {
    stream = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: flushMs });
    stdoutStreams.set(flushMs, stream);
  }
  return stream;
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
    logger: options.logger ?? loggerFor(config),
    // One line per request, written by observeRequests, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    genReqId: requestIdOf,
    bodyLimit: config.bodyLimit,
    http: {
      // The request line counts toward Node's header limit (16 KiB by default): make room for the longest path value.
      maxHeaderSize: 16 * 1024 + longestPathValue,
      // A client that stalls while sending headers (slowloris) is cut off after this (CONTRACT §3).
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
    // __proto__ and constructor are ordinary keys (CONTRACT §1); our parser never assigns them.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    ajv: {
      customOptions: {
        coerceTypes: false, // "4" stays a string and true a boolean (STACK.md)
        useDefaults: false,
        removeAdditional: false,
        allErrors: false,
        strictNumbers: false, // a literal beyond double range (1e400) parses to Infinity and is still a number (CONTRACT §1)
        verbose: true, // error.parentSchema carries the x-expected words for the detail
        keywords: [EXPECTED, 'x-examples'],
      },
    },
    frameworkErrors: (error, _request, reply) => sendProblem(reply, toProblem(error, config.bodyLimit)),
    clientErrorHandler: writeClientError,
  });
  app.decorateRequest('numberSource', undefined);
  const lifecycle: Lifecycle = { ready: true };
  app.decorate('lifecycle', lifecycle);
  const { isClosing } = drainGracefully(app.server);
  const metrics = createHttpMetrics();
  // From the first moment of shutdown, responses ask clients to reconnect: new connections still
  // reach this process during the drain delay, and by the close few keep-alive ones are left.
  observeRequests(app, metrics, () => !lifecycle.ready || isClosing());

  // JSON is the only media type taken (CONTRACT §1): Fastify's text/plain parser goes too.
  app.removeAllContentTypeParsers();
  const parseJsonBody = createJsonBodyParser(config.maxDepth);
  // The callback form: an async parser would cost a promise and a microtask per request.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request: FastifyRequest, body: Buffer, done) => {
    let parsed: unknown;
    try {
      parsed = parseJsonBody(request, body);
    } catch (error) {
      return done(error as Error, undefined);
    }
    done(null, parsed);
  });

  app.setErrorHandler(problemErrorHandler(config.bodyLimit));
  app.setNotFoundHandler(async (request, reply) =>
    sendProblem(reply, problemOf(404, `There is no ${request.method} ${request.url.split('?')[0]}; the operations are listed at ${prefix}/docs`)),
  );
  enableCors(app, config.corsOrigins);
  await protect(app, config, `${prefix}/docs`);

  const routes = recordRoutes(app);
  const limits = { sortMaxLength: config.sortMaxLength, numberTextLimit: config.numberTextLimit };
  await registerOpenApi(app, prefix);
  registerProbes(app, lifecycle, metrics);
  await app.register(operationRoutes, { prefix, ...limits });
  if (config.legacyRoutes === 'on') {
    markLegacyResponses(app, config, prefix);
    await app.register(legacyRoutes, { ...limits, successorPrefix: prefix });
  }
  answerOtherMethods(app, routes);
  return app;
}
