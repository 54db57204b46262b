import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Counter } from 'prom-client';

import type { Config } from '../../config.js';
import { problemOf } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { sendProblem } from '../problem-responses.js';
import { gaugeOf } from '../observability/metrics.js';
import { routeConfigOf, type RouteConfig } from './route-config.js';
import { whenResponseCloses } from './connections.js';
import { RefusalLog } from '../observability/refusal-log.js';

/*
 * Overload control, the four rules of docs/operations.md ("Past capacity"): (1) each request's wait
 * measured where its work queues, the event loop and the offload pool; (2) while a queue stands
 * (CoDel's test: Nichols and Jacobson, "Controlling Queue Delay", 2012; RFC 8289; as Maurer, "Fail
 * at Scale", 2015, applies it to requests), a request that would wait past the target is refused;
 * (3) only while callers come and go on new connections; (4) a refusal never becomes a caller's
 * whole traffic. No timer runs while nothing arrives.
 */

// CoDel's interval: how long a queue may stay over the target before it counts as standing (and
// under it before it no longer does), the time a burst takes to drain; RFC 8289 §4.3 takes 100 ms.
const INTERVAL_MS = 100;
// The share of requests on new connections above which callers come and go: wrk's 256 kept-alive
// connections brought under 1% once open, callers past capacity 15-50% (bench/results/history-2026-12.md).
const NEW_CALLERS_SHARE = 0.1;
// Reading a request and writing its answer cost the same refused or not: under this size a refusal
// saves at most about three fifths of a request (bench/results/refusal-worth.md), too little for the
// answer lost. A smaller body (every GET) is never refused, nor measured: its wait is the loop's.
const REFUSABLE_BODY_BYTES = 4 * 1024;
// Retry-After is whole seconds (RFC 9110 §10.2.3), and 1 is the least that asks for a wait: by then
// ten of the standing-queue test's intervals have passed.
const RETRY_AFTER_SECONDS = '1';

/**
 * CoDel's standing-queue test on the waits of requests as they arrive (rule 2 above).
 *
 * @example
 * const queue = new StandingQueue(50);
 * queue.refuses(80, 0); queue.refuses(80, 100) //=> false (a burst so far), then true: over 50 ms for 100 ms
 */
export class StandingQueue {
  // Since when every wait has been over the target, and since when every wait has been at most it (-1: the last was not).
  private overSince = -1;
  private underSince = -1;
  private standing = false;
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly targetMs: number) {}

  /** Whether a request that would wait `waitMs`, arriving at `now` (ms), is refused. */
  refuses(waitMs: number, now: number): boolean {
    // An interval without requests says nothing of the queue in it: the counts start again.
    if (now - this.lastAt > INTERVAL_MS) [this.overSince, this.underSince, this.standing] = [-1, -1, false];
    this.lastAt = now;
    if (waitMs > this.targetMs) {
      const inARow = this.overSince >= 0;
      if (!inARow) this.overSince = now;
      this.underSince = -1;
      // A wait past the target by more than an interval keeps every wait past it for the whole next
      // interval, whatever arrives (a queue drains no faster than time passes): the test's outcome,
      // known now. Not for the first wait past the target: one long job ahead (a 1,000,000-element
      // sort holds a thread about a second) is a burst of one, which waiting fails nobody.
      if (now - this.overSince >= INTERVAL_MS || (inARow && waitMs > this.targetMs + INTERVAL_MS)) this.standing = true;
      return this.standing;
    }
    this.overSince = -1;
    if (this.underSince < 0) this.underSince = now;
    if (now - this.underSince >= INTERVAL_MS) this.standing = false;
    return false;
  }
}

/**
 * How late the event loop runs what is ready, while busy: the lateness of a 1 ms timer armed as a
 * request arrives (an idle process runs none), bounded by the loop's active time since
 * (`performance.eventLoopUtilization`): a loop that waited for a CPU a neighbour held has no queue.
 * While a sample is due, the turn running now counts too (past capacity one reads hundreds of requests).
 *
 * @example
 * const loop = new LoopLateness(); loop.ms(performance.now()) //=> 0.1 on an idle loop
 */
export class LoopLateness {
  /** The last sample's lateness (for /metrics). */
  lastMs = 0;
  private dueAt = 0;
  private armedAt = performance.eventLoopUtilization();
  private readonly sampled = (): void => {
    this.lastMs = this.busyMs(performance.now());
    this.dueAt = 0;
  };

  /** The loop's busy lateness in milliseconds as a request arrives at `now`; arms a sample if none is pending. */
  ms(now: number): number {
    if (this.dueAt === 0) {
      this.dueAt = now + 1;
      this.armedAt = performance.eventLoopUtilization();
      setTimeout(this.sampled, 1).unref();
      return this.lastMs;
    }
    return now - this.dueAt > this.lastMs ? Math.max(this.lastMs, this.busyMs(now)) : this.lastMs;
  }

  private busyMs(now: number): number {
    return Math.max(0, Math.min(now - this.dueAt, performance.eventLoopUtilization(this.armedAt).active));
  }
}

/**
 * The share of requests that came on a connection of their own (its first request) over the last
 * two intervals: callers that come and go. An open load brings callers on new connections whenever
 * the ones its clients keep are busy, which past capacity they are; a closed loop brings none.
 *
 * @example
 * const callers = new NewCallers(); callers.arrived(true, 0) //=> true: every request so far was a new caller
 */
export class NewCallers {
  private start = Number.NEGATIVE_INFINITY;
  private newNow = 0;
  private allNow = 0;
  private newBefore = 0;
  private allBefore = 0;

  /** Counts a request (on a new connection or not) arriving at `now`; whether new callers are at least `NEW_CALLERS_SHARE` of the requests. */
  arrived(onNewConnection: boolean, now: number): boolean {
    if (now - this.start >= INTERVAL_MS) {
      const gap = now - this.start >= 2 * INTERVAL_MS;
      [this.newBefore, this.allBefore] = gap ? [0, 0] : [this.newNow, this.allNow];
      [this.newNow, this.allNow, this.start] = [0, 0, now];
    }
    this.allNow++;
    if (onNewConnection) this.newNow++;
    return this.newNow + this.newBefore >= NEW_CALLERS_SHARE * (this.allNow + this.allBefore);
  }
}

/**
 * The overload-control hook (the rules above) for OVERLOAD_TARGET_MS = `targetMs`, with its metrics
 * registered on `app.metrics`. Requests to anything but an operation (probes, /metrics, the docs)
 * are neither judged nor counted.
 *
 * @example
 * app.addHook('onRequest', overloadControl(app, 50, config)); // 503 with Retry-After past capacity
 */
export function overloadControl(app: FastifyInstance, targetMs: number, config: Pick<Config, 'offloadBodyBytes'>): onRequestHookHandler {
  const loop = new LoopLateness();
  const [loopQueue, poolQueue] = [new StandingQueue(targetMs), new StandingQueue(targetMs)];
  const pool = app.memory.pool;
  // Pool-bound requests admitted and not yet answered.
  let pooled = 0;
  const answered = (): void => void pooled--;
  const poolWait = (): number => pool.waitMs(pooled);
  // The connections seen, and those whose last request was refused.
  const connections = new WeakMap<object, 'seen' | 'refused'>();
  const newCallers = new NewCallers();
  // Refusals by where the request would have waited: the label of overload_refusals_total.
  const refused = { loop: 0, pool: 0 };
  const refusals = new RefusalLog(app.serviceLog, 'refusing requests past capacity');

  app.metrics.register(
    new Counter({
      name: 'overload_refusals_total',
      help: 'Requests refused with 503 because their work would have waited past OVERLOAD_TARGET_MS in a standing queue, by where: the event loop or the offload pool',
      labelNames: ['signal'],
      registers: [],
      collect() {
        this.reset();
        for (const [signal, count] of Object.entries(refused)) this.inc({ signal }, count);
      },
    }),
  );
  app.metrics.register(
    gaugeOf(
      'overload_queue_delay_seconds',
      "How long work admitted now would wait to start, the longer of the event loop's last lateness and the offload pool's wait (with WORKERS > 1, the longest worker's)",
      () => Math.max(loop.lastMs, poolWait()) / 1000,
      'max',
    ),
  );
  app.metrics.register(
    gaugeOf('overload_target_seconds', 'OVERLOAD_TARGET_MS: waits past this in a standing queue are refused', () => targetMs / 1000, 'first'),
  );

  // A body the pool may take: over OFFLOAD_BODY_BYTES, or chunked or coded (its size unknown), to a
  // route that reads its body whole (a stream's lines are answered on the event loop).
  const mayBePooled = (request: FastifyRequest, route: RouteConfig): boolean => {
    if (request.method !== 'POST' || route.memory === undefined || !('perByte' in route.memory)) return false;
    return Number(request.headers['content-length']) > config.offloadBodyBytes || request.headers['content-encoding'] !== undefined;
  };

  // A body whose size is unknown (chunked, or coded and so of any size once decoded) may be large.
  const worthRefusing = ({ headers }: FastifyRequest): boolean =>
    headers['transfer-encoding'] !== undefined || headers['content-encoding'] !== undefined || Number(headers['content-length']) >= REFUSABLE_BODY_BYTES;

  return function overloadControl(request, reply, done) {
    const route = routeConfigOf(request);
    // What it would never refuse it does not measure either: no timer, no count on their path.
    if ((route.countsAs === undefined && route.memory === undefined) || !worthRefusing(request)) return done();
    const now = performance.now();
    const socket = request.raw.socket;
    const last = connections.get(socket);
    const open = newCallers.arrived(last === undefined, now);
    const pooledBody = mayBePooled(request, route);
    const loopWaitMs = loop.ms(now);
    const poolWaitMs = pooledBody ? poolWait() : 0;
    // Both queues see every wait, whichever refuses and whatever the callers.
    const byLoop = loopQueue.refuses(loopWaitMs, now);
    const byPool = pooledBody && poolQueue.refuses(poolWaitMs, now);
    if ((!byLoop && !byPool) || !open) {
      if (last !== 'seen') connections.set(socket, 'seen');
      if (pooledBody) {
        pooled++;
        whenResponseCloses(reply.raw, answered);
      }
      return done();
    }
    connections.set(socket, 'refused');
    // Refused on purpose: counted, and not logged as a failure each (access-log.ts).
    request.refusedOnPurpose = true;
    const signal = byLoop ? 'loop' : 'pool';
    refused[signal]++;
    refusals.count(() => ({ signal, queueDelayMs: Math.round(byLoop ? loopWaitMs : poolWaitMs), targetMs }));
    reply.header('retry-after', RETRY_AFTER_SECONDS);
    // The connection stays open, the rest of the body read and dropped: a refusal that closed it
    // would send a client that reconnects back as a new caller, and refusals would feed themselves.
    const send = (): void => void sendProblem(reply, problemOf(503, LIMIT_TEXTS.overloadedNow), { keepAlive: true });
    // One whose last request was refused gets this refusal only after the target: a caller that sends
    // again at once, ignoring Retry-After, cannot make refusing it the process's work.
    if (last === 'refused') setTimeout(send, targetMs);
    else send();
  };
}
