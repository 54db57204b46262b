import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type Span } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { VERSION } from '../../version.js';

/**
 * OpenTelemetry traces, loaded only when the standard environment asks for them (server.ts):
 * OpenTelemetry's NodeSDK reads every OTEL_* variable (exporter, endpoint, protocol, sampler,
 * service name, resource, propagators); this file adds one SERVER span per request, named and
 * marked as the HTTP semantic conventions say (https://opentelemetry.io/docs/specs/semconv/http/http-spans/).
 * @fastify/otel is not used: it marks a 4xx ERROR and ends its span at `onSend`, before a stream's
 * body (docs/development.md).
 */

declare module 'fastify' {
  interface FastifyRequest {
    span: Span | undefined;
  }
}

export interface Tracing {
  /** Adds a span per request to an app; call it before any other hook is added. */
  traceRequests(app: FastifyInstance): void;
  /** Exports the spans still held, within `timeoutMs`. */
  flush(timeoutMs: number): Promise<void>;
}

// The methods HTTP semantic conventions name; any other is `_OTHER`.
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/**
 * Starts OpenTelemetry's SDK from the OTEL_* environment (the service's name by default).
 *
 * @example
 * const tracing = startTracing(); tracing.traceRequests(app); await tracing.flush(3000);
 */
export function startTracing(): Tracing {
  // NodeSDK reads these from the environment; the operator's values win. Without a log level the
  // SDK says nothing of a bad setting (an endpoint that is not a URL, an unknown exporter): at
  // `warn` it says so on standard error.
  process.env.OTEL_SERVICE_NAME ||= 'json-utility-service';
  process.env.OTEL_LOG_LEVEL ||= 'warn';
  const sdk = new NodeSDK({ instrumentations: [] });
  sdk.start();
  const tracer = trace.getTracer('json-utility-service', VERSION);
  return {
    traceRequests(app) {
      app.decorateRequest('span', undefined);
      app.addHook('onRequest', async (request) => {
        const route = request.routeOptions.url;
        const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
        const query = request.url.indexOf('?');
        const span = tracer.startSpan(
          route === undefined ? method : `${method} ${route}`,
          {
            kind: SpanKind.SERVER,
            attributes: {
              'http.request.method': method,
              ...(method === '_OTHER' ? { 'http.request.method_original': request.method } : {}),
              ...(route === undefined ? {} : { 'http.route': route }),
              'url.path': query === -1 ? request.url : request.url.slice(0, query),
              'url.scheme': 'http',
              'network.protocol.version': request.raw.httpVersion,
              'client.address': request.ip,
              ...(request.headers['user-agent'] === undefined ? {} : { 'user_agent.original': request.headers['user-agent'] }),
            },
          },
          propagation.extract(ROOT_CONTEXT, request.headers),
        );
        request.span = span;
        // Every log line of the request names its trace: the access log and any error writes through it.
        const { traceId, spanId } = span.spanContext();
        request.log = request.log.child({ trace_id: traceId, span_id: spanId });
      });
      const end = (request: FastifyRequest, status: number | undefined): void => {
        const span = request.span;
        if (span === undefined) return;
        request.span = undefined;
        const operation = request.routeOptions.config.countsAs ?? request.routeOptions.schema?.operationId;
        if (operation !== undefined) span.setAttribute('json_utility.operation', operation);
        const tally = request.operationTally;
        if (tally !== undefined) {
          let operations = 0;
          let problems = 0;
          for (const [key, n] of Object.entries(tally)) {
            operations += n;
            if (!key.endsWith(' 200')) problems += n;
          }
          span.setAttributes({ 'json_utility.operations': operations, 'json_utility.problems': problems });
        }
        if (status === undefined) {
          span.setAttribute('error.type', 'aborted');
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away before the answer was sent' });
        } else {
          span.setAttribute('http.response.status_code', status);
          // A server span is an error for a 5xx only; a 4xx is the client's (semantic conventions, HTTP spans, Status).
          if (status >= 500) {
            span.setAttribute('error.type', String(status));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
        }
        span.end();
      };
      app.addHook('onResponse', async (request, reply) => end(request, reply.statusCode));
      app.addHook('onRequestAbort', async (request) => end(request, undefined));
    },
    async flush(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([sdk.shutdown(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
  };
}
