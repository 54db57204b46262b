import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';

import type { Config } from '../../config.js';
import { ProblemError } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { overloadControl } from './overload-control.js';
import { RefusalLog } from '../observability/refusal-log.js';

const RETRY_AFTER_SECONDS = 5;
// How often the event-loop delay is sampled: often enough to react within a few requests.
const PRESSURE_SAMPLE_INTERVAL_MS = 50;

/**
 * The `protection` plugin, each part configurable: overload control (overload-control.ts), on by
 * default; a per-client rate limit (@fastify/rate-limit) and shedding on event-loop delay
 * (@fastify/under-pressure), off by default. Probes opt out of the last two with their route config.
 * After `response-headers`, so that its 429 and 503 carry the service's headers. The rate limit's
 * hook joins each route's own, after those the route declares (a 429 carries `Vary` and a legacy
 * route's headers); the two 503s come from app-wide hooks, which run before any route's own: no
 * `Vary` (a problem is never coded), a legacy route's headers because `sendProblem` writes them.
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

type ProtectionOptions = Pick<Config, 'rateLimitMax' | 'rateLimitWindowMs' | 'maxEventLoopDelayMs' | 'overloadTargetMs' | 'offloadBodyBytes'>;
