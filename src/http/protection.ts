import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import type { Config } from '../config.js';
import { ProblemError } from './problem.js';
import { addRouteHeaders } from './route-headers.js';

const RETRY_AFTER_SECONDS = 5;
// How often the event-loop delay is sampled: often enough to react within a few requests.
const PRESSURE_SAMPLE_INTERVAL_MS = 50;

/**
 * Edge protection, each part configurable:
 * - security headers: on the docs page, helmet's (https://helmetjs.github.io) with a
 *   Content-Security-Policy that allows exactly what the page loads: its own scripts and styles,
 *   the inline styles Swagger UI sets, and data: images; on every other response, which is JSON,
 *   the two that matter for an API (OWASP REST Security Cheat Sheet, "Security headers");
 * - a per-client rate limit by @fastify/rate-limit (https://github.com/fastify/fastify-rate-limit),
 *   off by default;
 * - load shedding on event-loop delay by @fastify/under-pressure
 *   (https://github.com/fastify/under-pressure), off by default.
 * Probes opt out of the last two with their route config.
 */
export async function protect(
  app: FastifyInstance,
  config: Pick<Config, 'securityHeaders' | 'rateLimitMax' | 'rateLimitWindowMs' | 'maxEventLoopDelayMs'>,
  docsPrefix: string,
): Promise<void> {
  if (config.securityHeaders === 'on') addSecurityHeaders(app, docsPrefix);
  if (config.rateLimitMax > 0) {
    await app.register(rateLimit, {
      max: config.rateLimitMax,
      timeWindow: config.rateLimitWindowMs,
      errorResponseBuilder: (_request, context) =>
        new ProblemError(429, `Too many requests: the limit is ${context.max} per ${context.after} (RATE_LIMIT_MAX); retry after the time in Retry-After`),
    });
  }
  if (config.maxEventLoopDelayMs > 0) {
    await app.register(underPressure, {
      maxEventLoopDelay: config.maxEventLoopDelayMs,
      retryAfter: RETRY_AFTER_SECONDS,
      sampleInterval: PRESSURE_SAMPLE_INTERVAL_MS,
      exposeStatusRoute: false,
    });
  }
}

const DOCS_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'style-src': ["'self'", "'unsafe-inline'"],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'font-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'none'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
    },
  },
  // The API is meant to be called from other origins (CORS); only embedding is refused.
  crossOriginResourcePolicy: { policy: 'cross-origin' },
};

// A JSON response is never a document: it may load nothing and be framed nowhere, and must not be sniffed as HTML.
export const API_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

/** The headers helmet sets with these options; they depend on nothing in the request, so they are worked out once. */
export function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = value),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  helmet(options)({} as never, response as never, () => undefined);
  return headers;
}

/**
 * Every response gets the API headers (set with the other fixed headers, response-headers.ts);
 * routes under the docs prefix get helmet's set on top, its CSP replacing the API one, worked
 * out once: helmet is not run per request.
 */
function addSecurityHeaders(app: FastifyInstance, docsPrefix: string): void {
  const docsHeaders = helmetHeaders(DOCS_HELMET_OPTIONS);
  addRouteHeaders(app, (path) => (path === docsPrefix || path.startsWith(`${docsPrefix}/`) ? docsHeaders : undefined));
}
