import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';

import { type Config, workerCount } from '../../config.js';
import { ProblemError, problemOf } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { sendProblem } from '../problem-responses.js';
import { counterOf, gaugeOf } from '../observability/metrics.js';
import { AcceptQueue, LoopDelay, RequestTime } from './queue-delay.js';
import { routeConfigOf } from './route-config.js';
import { whenResponseCloses } from './connections.js';

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
    if (config.overloadTargetMs !== 'off') app.addHook('onRequest', shedPastTarget(app, config.overloadTargetMs, config));
    if (config.rateLimitMax > 0) {
      await app.register(rateLimit, {
        max: config.rateLimitMax,
        timeWindow: config.rateLimitWindowMs,
        errorResponseBuilder: (_request, context) => new ProblemError(429, LIMIT_TEXTS.rate(context.max, context.after)),
      });
    }
    if (config.maxEventLoopDelayMs > 0) {
      const { maxEventLoopDelayMs } = config;
      const shed = new Refusals(app.serviceLog, 'shedding load: the event loop is late past MAX_EVENT_LOOP_DELAY_MS');
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

const OVERLOAD_RETRY_AFTER_SECONDS = '1';
// After a refusal, this long of waits over the target are refused at once.
const REFUSING_MS = 1_000;
// How many targets long a wait must stay over the target before the first refusal.
const SUSTAINED_TARGETS = 2;
// Like CoDel's one packet, this many bodies waiting for the pool are no standing queue.
const FEWEST_WAITING = 4;
// A connection in the kernel's accept queue can be refused only once it has waited there, so a
// queue that grows is held to this share of the target: it is how long a refusal takes (15 ms of
// 50). One that drains by itself (below capacity, after a pause) is allowed the whole target.
const ACCEPT_TARGET_SHARE = 0.3;
// While refusing, one log line this often at most: a line for each refusal would be thousands a
// second past capacity, and writing one cost a fifth of what the refusal did (docs/performance.md).
const REFUSING_LINE_MS = 10_000;

/** Refusals on purpose, counted, and told in one warn line at most every `REFUSING_LINE_MS`. */
class Refusals {
  total = 0;
  private totalAtLine = 0;
  private lineAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly message: string,
  ) {}

  /** Counts one; `fields` are the line's own, read only when one is written. */
  count(fields: () => Record<string, number>): void {
    this.total++;
    const now = performance.now();
    if (now - this.lineAt < REFUSING_LINE_MS) return;
    this.log.warn({ refused: this.total - this.totalAtLine, refusedTotal: this.total, ...fields() }, this.message);
    this.lineAt = now;
    this.totalAtLine = this.total;
  }
}

/**
 * When a wait over the target is overload: once it has lasted twice the target (a burst that a
 * queue absorbs that soon is no overload: CoDel's interval, in short), or at once while refusals
 * are recent (the overload goes on). While they are, `turnMs()` counts as a wait too: the turn
 * running now, which the waits measured between turns cannot see until it ends.
 */
class Overload {
  private overSince = -1;
  private lastRefusal = Number.NEGATIVE_INFINITY;

  constructor(private readonly targetMs: number) {}

  admits(waitMs: number, turnMs: () => number): boolean {
    const now = performance.now();
    const refusing = now - this.lastRefusal <= REFUSING_MS;
    if (waitMs <= this.targetMs && !(refusing && turnMs() > this.targetMs)) {
      this.overSince = -1;
      return true;
    }
    if (this.overSince < 0) this.overSince = now;
    if (now - this.overSince < SUSTAINED_TARGETS * this.targetMs && !refusing) return true;
    this.lastRefusal = now;
    return false;
  }
}

/**
 * Overload control: a request to an operation is answered 503 at once, before its body is read,
 * when the work it brings would wait longer than `targetMs` to start (queue-delay.ts), and has
 * for twice `targetMs` or refusals are recent (`Overload`): the event loop's delay plus, once the
 * app listens, the wait of new connections in the kernel's accept queue, which while it grows is
 * also held to `ACCEPT_TARGET_SHARE` of the target alone, as is, while refusing, the turn running
 * now (how late the loop's next tick already is); for a body the offload pool takes, the
 * pool's wait too (the pool-bound requests admitted and not yet answered, times the interval
 * between the pool's completions). Probes, metrics and the docs are never refused.
 */
function shedPastTarget(app: FastifyInstance, targetMs: number, config: Pick<Config, 'offloadBodyBytes' | 'workers'>): onRequestHookHandler {
  const loop = new LoopDelay();
  const requestTime = new RequestTime();
  let accept: AcceptQueue | undefined;
  app.addHook('onListen', function watchAcceptQueue() {
    accept ??= new AcceptQueue(app.server, workerCount(config), requestTime);
  });
  // A connection waits to be accepted, then for the loop to read it.
  const loopMs = (): number => loop.ms() + (accept?.ms() ?? 0);
  // The wait judged against the target: a growing accept queue's counts as if the target were its share.
  const judgedLoopMs = (): number => {
    const acceptMs = accept?.ms() ?? 0;
    return Math.max(loop.ms() + acceptMs, accept?.grows() === true ? acceptMs / ACCEPT_TARGET_SHARE : 0);
  };
  // The turn running now, judged at the same share, while refusing: past capacity one turn can read
  // hundreds of requests, each of which has waited as long as the turn has run. Admitted by the
  // delay of the turns before it, they made turns of hundreds of milliseconds, in which the
  // kernel's queue filled and new callers' handshakes were dropped (bench/results/history-2026-11.md,
  // "the turn that reads hundreds of requests"). Below capacity one long turn is no overload.
  const turnMs = (): number => loop.overdueMs() / ACCEPT_TARGET_SHARE;
  const pool = app.memory.pool;
  let pooled = 0;
  const refused = new Refusals(app.serviceLog, 'refusing requests past capacity');
  const answered = (): void => void pooled--;
  // A large request is never refused for being slow alone (FEWEST_WAITING).
  const poolMs = (): number => (pooled > FEWEST_WAITING ? pooled * pool.intervalMs() : 0);
  app.addHook('onClose', () => {
    loop.close();
    requestTime.close();
    accept?.close();
  });
  app.metrics.register(
    counterOf('overload_refusals_total', 'Requests refused with 503 because their work would have waited past OVERLOAD_TARGET_MS', () => refused.total),
  );
  app.metrics.register(
    gaugeOf(
      'overload_queue_delay_seconds',
      "How long work admitted now would wait to start: the event loop's delay with new connections' wait to be accepted, or the offload pool's wait, the longer (with WORKERS > 1, the longest worker's)",
      () => Math.max(loopMs(), poolMs()) / 1000,
      'max',
    ),
  );
  app.metrics.register(gaugeOf('overload_target_seconds', 'OVERLOAD_TARGET_MS: the longest wait a request is admitted to', () => targetMs / 1000, 'first'));
  // A body the pool may take: over OFFLOAD_BODY_BYTES, or chunked or coded (its size unknown), to a
  // route that reads its body whole (a stream's lines are answered on the event loop, however long it runs).
  const mayBePooled = (request: FastifyRequest): boolean => {
    if (request.method !== 'POST') return false;
    if (Number(request.headers['content-length']) <= config.offloadBodyBytes && request.headers['content-encoding'] === undefined) return false;
    const memory = routeConfigOf(request).memory;
    return memory !== undefined && 'perByte' in memory;
  };
  const loopBound = new Overload(targetMs);
  const poolBound = new Overload(targetMs);
  return function shedPastTarget(request, reply, done) {
    const pooledBody = mayBePooled(request);
    const admit = pooledBody ? poolBound.admits(Math.max(judgedLoopMs(), poolMs()), turnMs) : loopBound.admits(judgedLoopMs(), turnMs);
    if (admit) {
      requestTime.admitted();
      if (pooledBody) {
        pooled++;
        whenResponseCloses(reply.raw, answered);
      }
      return done();
    }
    const route = routeConfigOf(request);
    if (route.countsAs === undefined && route.memory === undefined) return done();
    requestTime.refused();
    accept?.refused();
    // Refused on purpose: counted in overload_refusals_total, and not logged as a failure each (access-log.ts).
    request.refusedOnPurpose = true;
    refused.count(() => ({ queueDelayMs: Math.round(Math.max(loopMs(), pooledBody ? poolMs() : 0)), targetMs }));
    reply.header('retry-after', OVERLOAD_RETRY_AFTER_SECONDS);
    sendProblem(reply, problemOf(503, LIMIT_TEXTS.overloadedNow));
  };
}

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
