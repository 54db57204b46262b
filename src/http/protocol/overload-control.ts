import { closeSync, openSync, readSync } from 'node:fs';
import type { Server } from 'node:net';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Counter } from 'prom-client';

import { type Config, workerCount } from '../../config.js';
import { problemOf } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { sendProblem } from '../problem-responses.js';
import { gaugeOf } from '../observability/metrics.js';
import { routeConfigOf, type RouteConfig } from './route-config.js';
import { whenResponseCloses } from './connections.js';
import { RefusalLog } from './refusal-log.js';

/*
 * Overload control, its four rules as docs/operations.md ("Past capacity") gives them: (1) each
 * request's wait measured where its work queues, the event loop, the offload pool and, for a new
 * connection, the kernel's accept queue; (2) a queue standing once every wait has been over the
 * target for an interval, until every wait has been at most it for an interval, and while it stands
 * a request that would wait past the target refused: CoDel's test (Nichols and Jacobson, "Controlling
 * Queue Delay", 2012; RFC 8289) as servers apply it to request queues (Maurer, "Fail at Scale", 2015);
 * (3) only while callers come and go on new connections, since a closed loop of kept-alive ones
 * cannot grow a queue past its number and sends a refused request again at once; (4) a refusal that
 * cannot become a caller's whole traffic. No timer runs while nothing arrives.
 */

// CoDel's interval: how long a queue may stay over the target before it counts as standing (and
// under it before it no longer does), the time a burst takes to drain; RFC 8289 §4.3 takes 100 ms.
const INTERVAL_MS = 100;
// The share of requests on new connections above which callers come and go: wrk's 256 kept-alive
// connections brought under 1% once open, callers past capacity 15-50% (bench/results/history-2026-12.md).
const NEW_CALLERS_SHARE = 0.1;
// A refusal saves only the request's own work: reading the request and writing an answer cost the
// loop the same either way. Under this size refusing saves too little of it (at most about three
// fifths; bench/results/refusal-worth.md) for the answer the caller loses: a request with a smaller
// body (every GET) is answered, never refused, and neither measured nor counted (its wait is the
// loop's, which the larger ones measure; a connection's first larger request is its new caller).
const REFUSABLE_BODY_BYTES = 4 * 1024;
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
      if (this.overSince < 0) this.overSince = now;
      this.underSince = -1;
      if (now - this.overSince >= INTERVAL_MS) this.standing = true;
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
  private dueAt = 0;
  private lastMs = 0;
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

  /** The last sample's lateness, without arming one (for /metrics). */
  lastSampleMs(): number {
    return this.lastMs;
  }

  private busyMs(now: number): number {
    return Math.max(0, Math.min(now - this.dueAt, performance.eventLoopUtilization(this.armedAt).active));
  }
}

// The accept queue is read at most this often, and only as a new connection's first request
// arrives; its first 16 KiB hold the listening sockets, which the kernel lists first.
const ACCEPT_READ_MS = 10;
const PROC_READ_BYTES = 16 * 1024;

/**
 * How long a connection accepted now waited in the kernel's accept queue, on Linux: libuv accepts one
 * connection a turn (libuv/libuv#3696), so callers that each open one wait there, unseen by any delay
 * the process measures. The listening socket's `rx_queue` in /proc/net/tcp or tcp6 (proc(5)) times
 * the time between two accepts since the last read (Little's law; with WORKERS > 1 each worker
 * accepts its share). 0 where there is no /proc.
 *
 * @example
 * const queue = new AcceptQueue(app.server, 1); queue.ms(performance.now()) //=> 0 while connections are accepted at once
 */
class AcceptQueue {
  private fd = -1;
  private port = '';
  private readonly buffer = Buffer.alloc(PROC_READ_BYTES);
  private readAt = Number.NEGATIVE_INFINITY;
  private accepted = 0;
  private waitMs = 0;

  constructor(
    server: Server,
    private readonly workers: number,
  ) {
    const address = server.address();
    if (address === null || typeof address === 'string') return;
    try {
      this.fd = openSync(address.family === 'IPv6' ? '/proc/net/tcp6' : '/proc/net/tcp', 'r');
    } catch {
      return;
    }
    this.port = `:${address.port.toString(16).toUpperCase().padStart(4, '0')}`;
    server.on('connection', () => void this.accepted++);
  }

  /** The wait of a connection accepted at `now`, in milliseconds, from a read at most `ACCEPT_READ_MS` old. */
  ms(now: number): number {
    if (this.fd < 0 || now - this.readAt < ACCEPT_READ_MS) return this.waitMs;
    const queued = this.read();
    // A read long after the last says nothing of the rate in between: its wait counts from the next.
    const sinceMs = now - this.readAt;
    this.waitMs = queued === 0 || sinceMs > INTERVAL_MS ? 0 : (queued * sinceMs) / Math.max(1, this.accepted * this.workers);
    this.readAt = now;
    this.accepted = 0;
    return this.waitMs;
  }

  /** The last read's wait, without reading (for /metrics). */
  lastMs(): number {
    return this.waitMs;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  private read(): number {
    const length = readSync(this.fd, this.buffer, 0, PROC_READ_BYTES, 0);
    for (const line of this.buffer.toString('latin1', 0, length).split('\n')) {
      const [, local, , state, queues] = line.trim().split(/\s+/);
      if (state === '0A' && local?.endsWith(this.port) === true) return Number.parseInt(queues?.split(':')[1] ?? '0', 16);
    }
    return 0;
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
export function overloadControl(app: FastifyInstance, targetMs: number, config: Pick<Config, 'offloadBodyBytes' | 'workers'>): onRequestHookHandler {
  const loop = new LoopLateness();
  const [loopQueue, poolQueue, acceptQueue] = [new StandingQueue(targetMs), new StandingQueue(targetMs), new StandingQueue(targetMs)];
  let accept: AcceptQueue | undefined;
  app.addHook('onListen', function watchAcceptQueue() {
    accept ??= new AcceptQueue(app.server, workerCount(config));
  });
  app.addHook('onClose', () => accept?.close());
  const pool = app.memory.pool;
  // Pool-bound requests admitted and not yet answered.
  let pooled = 0;
  const answered = (): void => void pooled--;
  const poolWait = (): number => pool.waitMs(pooled);
  // The connections seen, and those whose last request was refused.
  const connections = new WeakMap<object, 'seen' | 'refused'>();
  const newCallers = new NewCallers();
  // Refusals by where the request would have waited: the label of overload_refusals_total.
  const refused = { loop: 0, pool: 0, accept: 0 };
  const refusals = new RefusalLog(app.serviceLog, 'refusing requests past capacity');

  app.metrics.register(
    new Counter({
      name: 'overload_refusals_total',
      help: 'Requests refused with 503 because their work would have waited past OVERLOAD_TARGET_MS in a standing queue, by where: the event loop, the offload pool or the accept queue',
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
      "How long work admitted now would wait to start, the longest of the event loop's last lateness, the offload pool's wait and the accept queue's last (with WORKERS > 1, the longest worker's)",
      () => Math.max(loop.lastSampleMs(), poolWait(), accept?.lastMs() ?? 0) / 1000,
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
    // A connection's first request waited to be accepted too.
    const acceptWaitMs = last === undefined ? (accept?.ms(now) ?? 0) : 0;
    const byAccept = last === undefined && acceptQueue.refuses(acceptWaitMs, now);
    if ((!byLoop && !byPool && !byAccept) || !open) {
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
    const signal = byLoop ? 'loop' : byPool ? 'pool' : 'accept';
    refused[signal]++;
    refusals.count(() => ({ signal, queueDelayMs: Math.round({ loop: loopWaitMs, pool: poolWaitMs, accept: acceptWaitMs }[signal]), targetMs }));
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
