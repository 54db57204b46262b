import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ServerResponse } from 'node:http';
import { VERSION } from '../../version.js';
import { withBindings } from './request-logger.js';
import { routeDiagnostics } from './tracing-diagnostics.js';
import { answeredWhole, whenResponseCloses } from '../protocol/connections.js';
import { routeConfigOf } from '../protocol/route-config.js';
import { tallied } from '../../engine/items.js';

/**
 * OpenTelemetry traces, loaded only when the standard environment asks for them (server/serve.ts, tracing-requested.ts):
 * OpenTelemetry's NodeSDK reads every OTEL_* variable (exporter, endpoint, protocol, sampler,
 * service name, resource, propagators); this file adds one SERVER span per request, named and
 * marked as the HTTP semantic conventions say (https://opentelemetry.io/docs/specs/semconv/http/http-spans/).
 * @fastify/otel is not used: it marks a 4xx ERROR and ends its span at `onSend`, before a stream's
 * body (docs/development.md).
 */

export interface Tracing {
  /** The `tracing` plugin: a span per request. Register it first, so that its span covers every other hook. */
  readonly requests: FastifyPluginAsync;
  /** Exports the spans still held, within `timeoutMs`. */
  flush(timeoutMs: number): Promise<void>;
}

// The methods HTTP semantic conventions name; any other is `_OTHER`.
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/**
 * Starts OpenTelemetry's SDK from the OTEL_* environment (the service's name by default).
 *
 * @example
 * const tracing = startTracing(); await app.register(tracing.requests); await tracing.flush(3000);
 */
/**
 * A context manager that keeps no context: the active one is always the root, and `with` and
 * `bind` pass the function through unchanged (@opentelemetry/api's ContextManager interface).
 *
 * @example
 * context.setGlobalContextManager(new NoContext()); context.with(someContext, () => context.active()) //=> ROOT_CONTEXT
 */
export class NoContext implements ContextManager {
  active(): Context {
    return ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(_context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return fn.call(thisArg, ...args);
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

export function startTracing(): Tracing {
  // NodeSDK reads the OTEL_* variables; the operator's values win.
  process.env.OTEL_SERVICE_NAME ||= 'json-utility-service';
  // The SDK's complaints go to the service's log (tracing-diagnostics.ts). Given OTEL_LOG_LEVEL,
  // NodeSDK's constructor would set its console logger instead: it does not see the variable.
  const level = process.env.OTEL_LOG_LEVEL;
  const diagnostics = routeDiagnostics(level);
  delete process.env.OTEL_LOG_LEVEL;
  let sdk: NodeSDK;
  try {
    // A context manager that carries nothing (NodeSDK's documented `contextManager` option): spans
    // are started with their parent given (the incoming traceparent) and nothing reads the active
    // context, while the default, AsyncLocalStorage's, would carry one through every promise and
    // callback of every request.
    sdk = new NodeSDK({ instrumentations: [], contextManager: new NoContext() });
  } finally {
    if (level !== undefined) process.env.OTEL_LOG_LEVEL = level;
  }
  sdk.start();
  const tracer = trace.getTracer('json-utility-service', VERSION);
  return {
    requests: fp(
      async (app) => {
        diagnostics.writeTo(app.serviceLog);
        app.decorateRequest('span', undefined);
        app.addHook('onRequest', function startSpan(request, reply, done) {
          const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
          // Named by its method until sampled, then by method and route: routeOptions is a new object at each read.
          const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, propagation.extract(ROOT_CONTEXT, request.headers));
          // Every log line of the request names its trace, sampled or not: the trace id also ties the
          // line to the caller's logs. The ids join the request logger's bindings; no logger is built
          // unless the request logs (request-logger.ts), and `reply.log` is the same logger.
          const { traceId, spanId } = span.spanContext();
          request.log = withBindings(request.log, { trace_id: traceId, span_id: spanId });
          // A request that is not sampled is done here: its span records nothing.
          if (span.isRecording()) {
            // The name and attributes come after the sampling decision, not before: a request that is not
            // sampled does not build them, and none of the samplers OTEL_TRACES_SAMPLER names reads them.
            const config = routeConfigOf(request);
            const route = config.url;
            if (route !== undefined) span.updateName(`${method} ${route}`);
            const query = request.url.indexOf('?');
            span.setAttribute('http.request.method', method);
            if (method === '_OTHER') span.setAttribute('http.request.method_original', request.method);
            if (route !== undefined) span.setAttribute('http.route', route);
            span.setAttribute('url.path', query === -1 ? request.url : request.url.slice(0, query));
            span.setAttribute('url.scheme', 'http');
            span.setAttribute('network.protocol.version', request.raw.httpVersion);
            span.setAttribute('client.address', request.ip);
            const userAgent = request.headers['user-agent'];
            if (userAgent !== undefined) span.setAttribute('user_agent.original', userAgent);
            // The batch and the stream count none: their schema names the operation.
            const operation = config.countsAs ?? request.routeOptions.schema?.operationId;
            if (operation !== undefined) span.setAttribute('json_utility.operation', operation);
            request.span = span;
            (reply.raw as TracedResponse)[TRACED] = request;
            whenResponseCloses(reply.raw, endSpan);
          }
          done();
        });
      },
      {
        name: 'tracing',
        fastify: '5.x',
        dependencies: ['connections', 'request-logger'],
        decorators: { fastify: ['serviceLog'], request: ['operationTally'] },
      },
    ),
    async flush(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([sdk.shutdown(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
  };
}

const TRACED = Symbol('traced request');
type TracedResponse = ServerResponse & { [TRACED]?: FastifyRequest };

/**
 * A recorded span ends when its response closes: with the status sent, or as aborted when the
 * client went away before the answer was whole.
 */
function endSpan(response: TracedResponse): void {
  const request = response[TRACED];
  const span = request?.span;
  if (request === undefined || span === undefined) return;
  request.span = undefined;
  response[TRACED] = undefined;
  const tally = request.operationTally;
  if (tally !== undefined) {
    let operations = 0;
    let problems = 0;
    for (const [, status, n] of tallied(tally)) {
      operations += n;
      if (status !== 200) problems += n;
    }
    span.setAttributes({ 'json_utility.operations': operations, 'json_utility.problems': problems });
  }
  if (!answeredWhole(response)) {
    span.setAttribute('error.type', 'aborted');
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away before the answer was sent' });
  } else {
    const status = response.statusCode;
    span.setAttribute('http.response.status_code', status);
    // A server span is an error for a 5xx only; a 4xx is the client's (semantic conventions, HTTP spans, Status).
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  }
  span.end();
}
