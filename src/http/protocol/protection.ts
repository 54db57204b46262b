import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';

import type { Config } from '../../config.js';
import { ProblemError } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { overloadControl } from './overload-control.js';
import { RefusalLog } from './refusal-log.js';

const RETRY_AFTER_SECONDS = 5;
// How often the event-loop delay is sampled: often enough to react within a few requests.
const PRESSURE_SAMPLE_INTERVAL_MS = 50;

/**
 * The `protection` plugin, edge protection, each part configurable:
 * - a per-client rate limit by @fastify/rate-limit (https://github.com/fastify/fastify-rate-limit),
 *   off by default;
 * - load shedding on event-loop delay by @fastify/under-pressure
 *   (https://github.com/fastify/under-pressure), off by default.
 * Probes opt out of the last two with their route config. After `response-headers`: a 429 or a
 * 503 it answers carries the service's headers. The rate limit's hook is added to each route's own
 * as the route is added, after those the route declares: a 429 carries `Vary` and a legacy route's
 * headers too. Overload control and @fastify/under-pressure are app-wide hooks, which run before
 * any route's own: their 503 carries no `Vary` (a problem is never coded), and a legacy route's
 * headers because `sendProblem` writes them.
 *
 * @example
 * await app.register(protection, { rateLimitMax: 100, rateLimitWindowMs: 60_000, maxEventLoopDelayMs: 0 }); // after response-headers
 */
export const protection = fp<ProtectionOptions>(
  async (app, config) => {
    if (config.overloadTargetMs !== 'off') app.addHook('onRequest', overloadControl(app, config.overloadTargetMs, config));
    if (config.rateLimitMax > 0) {
      await app.register(rateLimit, {
        max: config.rateLimitMax,
        timeWindow: config.rateLimitWindowMs,
        errorResponseBuilder: (_request, context) => new ProblemError(429, LIMIT_TEXTS.rate(context.max, context.after)),
      });
    }
    if (config.maxEventLoopDelayMs > 0) {
      const { maxEventLoopDelayMs } = config;
      const shed = new RefusalLog(app.serviceLog, 'shedding load: the event loop is late past MAX_EVENT_LOOP_DELAY_MS');
      await app.register(underPressure, {
        maxEventLoopDelay: maxEventLoopDelayMs,
        sampleInterval: PRESSURE_SAMPLE_INTERVAL_MS,
        exposeStatusRoute: false,
        // Its 503 is on purpose, as overload control's is: one warn line while shedding, not an
        // error line each. The promise's rejection is the hook's error, which the error handler answers.
        pressureHandler: async (request, _reply, _type, delayMs) => {
          request.refusedOnPurpose = true;
          shed.count(() => ({ eventLoopDelayMs: Math.round(delayMs ?? 0), maxEventLoopDelayMs }));
          throw new ProblemError(503, LIMIT_TEXTS.overloaded, undefined, { 'retry-after': String(RETRY_AFTER_SECONDS) });
        },
      });
    }
  },
  // After the service's headers, which a 429 or a 503 it answers then carries; route-config decorates what routeConfigOf fills.
  { name: 'protection', fastify: '5.x', dependencies: ['response-headers', 'route-config'], decorators: { fastify: ['memory', 'metrics', 'serviceLog'] } },
);

type ProtectionOptions = Pick<Config, 'rateLimitMax' | 'rateLimitWindowMs' | 'maxEventLoopDelayMs' | 'overloadTargetMs' | 'offloadBodyBytes' | 'workers'>;

/**
 * The docs page's security headers, set by @fastify/helmet (https://github.com/fastify/fastify-helmet)
 * on the docs routes alone: helmet's defaults, with a Content-Security-Policy that allows exactly
 * what Swagger UI loads (its own scripts and styles, the inline styles it sets, data: images) and a
 * resource policy that lets other origins call the API (CORS); only embedding is refused.
 */
export const DOCS_HELMET_OPTIONS = {
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
  crossOriginResourcePolicy: { policy: 'cross-origin' },
} as const;

// A JSON response is never a document: it may load nothing and be framed nowhere, and must not be sniffed as HTML.
export const API_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};
