import type { Span } from '@opentelemetry/api';
import type { FastifyBaseLogger } from 'fastify';
import type { Tally } from '../engine/items.js';
import type { OperationId } from '../operations/index.js';
import type { ProblemError } from '../operations/problem.js';
import type { Reservation } from './memory/budget.js';
import type { RouteMemory } from './memory/estimates.js';
import type { MemorySetup } from './memory/memory-setup.js';
import type { HttpMetrics } from './observability/metrics.js';
import type { Lifecycle } from './observability/probes.js';
import type { Connections } from './protocol/connections.js';
import type { RequestCoding } from './protocol/content-coding.js';

/**
 * Every route config key, request decoration and app decoration the plugins share, declared once
 * (Fastify's types are extended by declaration merging). Each plugin named below decorates what
 * it owns (`decorateRequest`, `decorate`) and declares the decorators it reads, so that Fastify
 * refuses to start when one is registered before what it reads.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** What answering the route's body holds in the memory budget: it is admitted by it (memory-admission). */
    memory?: RouteMemory;
    /** The single operation the route answers, for `/metrics` and the span (a batch or a stream counts each of its own). */
    countsAs?: OperationId;
    /** What a 415 says on this route: which media type its body must have (problem-responses.ts). */
    mediaTypeProblem?: string;
    /** The most bytes a coded body of this route may decode to; `BODY_LIMIT` when not given (content-coding). */
    decodedBodyLimit?: number;
    /** False on a route whose answers are never compressed (they are always small) (answer-coding). */
    codedAnswers?: false;
    /** Headers every response of the route's path carries, its errors, 405 and OPTIONS included (a legacy route's Deprecation and Link): the route's own hook writes them (route-config), allowed-methods gives them to the path's other methods. */
    headers?: Readonly<Record<string, string>>;
    /** @fastify/cors's route options: preflights answered on this route, with these methods (allowed-methods). */
    cors?: { readonly preflight: boolean; readonly methods: string };
    /** Statuses of 500 and above that on this route are an answer, not a failure: logged as any answer, never at level error (access-log). */
    expectedStatuses?: readonly number[];
  }

  interface FastifyRequest {
    /** The route's config once read, through `routeConfigOf` (route-config). */
    routeConfig: FastifyRequest['routeOptions']['config'] | undefined;
    /** The request's span while it records and has not ended (tracing). */
    span: Span | undefined;
    /** The memory this request holds in the budget, from admission until its answer is written (memory-admission). */
    reservation: Reservation | undefined;
    /** The operations a batch or a stream answered, by operation and status, for `/metrics` and the span (decorated by buildApp, src/app.ts). */
    operationTally: Tally | undefined;
    /** The body's coding once read (`bodyCodingOf`): null for none, the 415 problem for one not read (content-coding). */
    bodyCoding: RequestCoding | ProblemError | null | undefined;
    /** What the answer's encoder will hold, from `Accept-Encoding`, once `answerEncoderBytes` has read it (answer-coding). */
    encoderBytes: number | undefined;
    /** Set when the service refuses this request on purpose (a new stream during the drain, overload control): logged as any answer, never at level error (decorated by buildApp). */
    refusedOnPurpose: true | undefined;
  }

  interface FastifyInstance {
    /** The service's logger (pino): Fastify runs without one of its own (request-logger.ts). */
    serviceLog: FastifyBaseLogger;
    /** The server's connections (the `connections` plugin): `isClosing()` is true from the start of shutdown. */
    connections: Connections;
    /** Set `ready` to false when shutdown begins: `/readyz` then answers 503. */
    lifecycle: Lifecycle;
    /** The memory budget and the pool that answers large bodies. */
    memory: MemorySetup;
    /** What `/metrics` serves: on this app, or with ADMIN_PORT on the admin app (server/listen.ts). */
    metrics: HttpMetrics;
  }
}
