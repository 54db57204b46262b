import type { FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import type { Config } from '../config.js';
import { ProblemError } from './problem.js';

const RETRY_AFTER_SECONDS = 5;
// How often the event-loop delay is sampled: often enough to react within a few requests.
const PRESSURE_SAMPLE_INTERVAL_MS = 50;

/**
 * Edge protection, each part configurable:
 * - security headers by @fastify/helmet (https://github.com/fastify/fastify-helmet), with a
 *   Content-Security-Policy that allows exactly what the docs page loads: its own scripts and
 *   styles, the inline styles Swagger UI sets, and data: images;
 * - a per-client rate limit by @fastify/rate-limit (https://github.com/fastify/fastify-rate-limit),
 *   off by default;
 * - load shedding on event-loop delay by @fastify/under-pressure
 *   (https://github.com/fastify/under-pressure), off by default.
 * Probes opt out of the last two with their route config.
 */
export async function protect(
  app: FastifyInstance,
  config: Pick<Config, 'securityHeaders' | 'rateLimitMax' | 'rateLimitWindowMs' | 'maxEventLoopDelayMs'>,
): Promise<void> {
  if (config.securityHeaders === 'on') {
    await app.register(helmet, {
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
    });
  }
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
