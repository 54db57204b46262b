import type { FastifyReply, preParsingHookHandler, preValidationHookHandler } from 'fastify';
import type { ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import { Counter, type Metric } from 'prom-client';
import { MemoryBudget, type Reservation } from './budget.js';
import { estimatePeakBytes } from './estimates.js';
import { ProblemError, problemOf } from '../../operations/problem.js';
import { sendProblem } from '../problem-responses.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { SETTINGS } from '../../config.js';
import { counterOf, gaugeOf } from '../observability/metrics.js';
import { bodyCodingOf } from '../protocol/content-coding.js';
import { answerEncoderBytes } from '../protocol/answer-coding.js';
import { whenResponseCloses } from '../protocol/connections.js';
import { routeConfigOf } from '../protocol/route-config.js';

const HELD = Symbol('reservation held by this response');
type HeldResponse = ServerResponse & { [HELD]?: Reservation };

function release(response: HeldResponse): void {
  response[HELD]?.release();
}

export interface AdmissionOptions {
  readonly budget: MemoryBudget;
  /** The process's share of MEMORY_LIMIT, for the messages. */
  readonly memoryLimit: number;
  readonly bodyLimit: number;
  readonly offloadBodyBytes: number;
  readonly admissionWaitMs: number;
}

/**
 * The `memory-admission` plugin, admission by estimated peak memory (docs/behaviour.md §3): once
 * every onRequest hook has let it through and before its body is read, a request to a route with
 * `config.memory` reserves what answering it may take at its peak (estimates.ts), from its
 * `Content-Length` (a chunked or coded body as if it were `BODY_LIMIT` bytes, lowered once it has
 * arrived), with the decoder of its body and the encoder of its answer. It holds the reservation until its answer has been written or the connection
 * has closed, so answers waiting for slow readers count. One that does not fit waits up to
 * `ADMISSION_WAIT_MS`, then gets 503 with `Retry-After`; one that could never fit gets 413
 * naming MEMORY_LIMIT. A client that sent `Expect: 100-continue` is told to send its body only
 * once the request is admitted. Its hooks are the context's where it is registered: app.ts
 * registers it beside the routes that take a body, so that other requests (probes, GET
 * operations, 404s) do not run them at all.
 *
 * @example
 * await bodies.register(memoryAdmission, { budget, memoryLimit, bodyLimit, offloadBodyBytes, admissionWaitMs }); // after connections and answer-coding
 */
export const memoryAdmission = fp<AdmissionOptions>(
  async (app, options) => {
    const { budget, bodyLimit, offloadBodyBytes, admissionWaitMs } = options;
    const retryAfter = String(Math.max(1, Math.ceil(admissionWaitMs / 1000)));
    app.decorateRequest('reservation', undefined);

    // Without a listener Node answers `100 Continue` by itself; with one, the request goes on to
    // Fastify and the admission below sends it once the body is welcome (RFC 9110 §10.1.1).
    app.server.on('checkContinue', (request, response) => app.server.emit('request', request, response));

    // Before any body is read, and after every onRequest hook (a rate limit's 429 holds no memory).
    const reserveMemory: preParsingHookHandler = (request, reply, payload, done) => {
      const config = routeConfigOf(request);
      const memory = config.memory;
      if (memory === undefined) return done(null, payload);
      const fixed = 'fixedBytes' in memory;
      const declared = Number(request.headers['content-length']);
      if (declared > bodyLimit && !fixed) return done(null, payload); // Fastify answers 413 without reading it
      // A coded body's decoded size is not known before it is decoded: it counts as a chunked one, with its decoder.
      let decoderBytes = 0;
      try {
        decoderBytes = bodyCodingOf(request)?.decoderBytes ?? 0;
      } catch {
        // A coding not read: the decoding hook answers 415 with its problem, before any body is read.
      }
      const coderBytes = decoderBytes + answerEncoderBytes(request, config);
      const chunked = Number.isNaN(declared) || fixed || decoderBytes > 0;
      const bodyBytes = chunked ? bodyLimit : declared;
      // A fixed reservation lasts as long as a stream runs, like a large body: small requests keep their share.
      const large = bodyBytes > offloadBodyBytes || fixed;
      let bytes = (fixed ? memory.fixedBytes : estimatePeakBytes(memory.perByte, bodyBytes, large)) + coderBytes;
      const ceiling = budget.ceiling(large);
      if (bytes > ceiling) {
        if (!chunked || fixed) {
          budget.tooLarge++;
          return void sendProblem(reply, neverFits(bytes, bodyBytes, options));
        }
        bytes = ceiling; // as much as a request can ever have; checked again once the body is known
      }
      const admitted = (reservation: Reservation): void => {
        // A client that went away while waiting has no answer to hold memory for.
        if (request.raw.socket.destroyed) return (reservation.release(), done(null, payload));
        request.reservation = reservation;
        (reply.raw as HeldResponse)[HELD] = reservation;
        whenResponseCloses(reply.raw, release);
        if (request.headers.expect?.toLowerCase() === '100-continue') reply.raw.writeContinue();
        done(null, payload);
      };
      const reserved = budget.reserve(bytes, large, admissionWaitMs);
      if (!(reserved instanceof Promise)) return admitted(reserved);
      reserved.then(admitted, () => refuseForNow(reply, retryAfter));
    };

    // Once the body has arrived (decoded), its reservation comes down to what its real size needs, or the
    // request is refused when that is more than a request can ever have (a chunked body, admitted
    // before its size was known). A fixed reservation stays as it is, whatever arrives.
    const shrinkToBody: preValidationHookHandler = (request, _reply, done) => {
      const { reservation } = request;
      const config = routeConfigOf(request);
      const memory = config.memory;
      if (reservation === undefined || memory === undefined || !('perByte' in memory)) return done();
      const bodyBytes = (request.body as Buffer | undefined)?.length ?? 0;
      const large = bodyBytes > offloadBodyBytes;
      // The body's decoder is done with; the answer's encoder is still to come.
      const bytes = estimatePeakBytes(memory.perByte, bodyBytes, large) + answerEncoderBytes(request, config);
      if (bytes > budget.ceiling(large)) {
        budget.tooLarge++;
        return done(new ProblemError(413, neverFits(bytes, bodyBytes, options).detail));
      }
      reservation.shrink(bytes);
      done();
    };
    app.addHook('preParsing', reserveMemory);
    app.addHook('preValidation', shrinkToBody);
  },
  { name: 'memory-admission', fastify: '5.x', dependencies: ['connections', 'answer-coding'], decorators: { request: ['encoderBytes'] } },
);

function neverFits(bytes: number, bodyBytes: number, options: AdmissionOptions) {
  const large = bodyBytes > options.offloadBodyBytes;
  return problemOf(413, LIMIT_TEXTS.memoryNeverFits(bodyBytes, bytes, options.budget.ceiling(large), options.memoryLimit));
}

function refuseForNow(reply: FastifyReply, retryAfter: string): void {
  reply.header('retry-after', retryAfter);
  sendProblem(reply, problemOf(503, LIMIT_TEXTS.memoryNow));
}

/** The budget in `/metrics`: its size, what is reserved, and how many requests waited or were refused. */
export function budgetMetrics(budget: MemoryBudget, memoryLimit: number): Metric[] {
  return [
    gaugeOf('memory_limit_bytes', `This process's share of ${SETTINGS.memoryLimit.env}`, () => memoryLimit),
    gaugeOf('memory_budget_capacity_bytes', 'Memory requests may reserve in all', () => budget.capacity),
    gaugeOf('memory_budget_reserved_bytes', 'Memory reserved by requests being answered', () => budget.reserved),
    gaugeOf('memory_budget_waiting_requests', 'Requests waiting for room in the memory budget', () => budget.waiting),
    counterOf('memory_budget_waits_total', 'Requests that had to wait for room', () => budget.waits),
    new Counter({
      name: 'memory_budget_refusals_total',
      help: 'Requests refused for memory: 503 after waiting, or 413 because they could never fit',
      labelNames: ['status'],
      registers: [],
      collect() {
        this.reset();
        this.inc({ status: '503' }, budget.timeouts);
        this.inc({ status: '413' }, budget.tooLarge);
      },
    }),
  ];
}
