import { OPERATIONS, type OperationId, type MemoryProfile } from '../../operations/index.js';
import type { ManyForm } from '../../engine/items.js';

/**
 * Peak memory of answering a body, per byte of body, for each kind of operation: measured by
 * `npm run measure:memory` on each operation's costliest bodies (many tiny elements, small
 * objects, a million parts) from 1 to 16 MiB and rounded up; test/memory-estimates.test.ts checks
 * that no measured peak is above its estimate. The measurements are in docs/operations.md (Reliability).
 */
export const PEAK_BYTES_PER_BODY_BYTE: Readonly<Record<MemoryProfile, number>> = {
  sort: 28,
  toString: 26,
  stringSplit: 34,
  isNumber: 16,
  parity: 16,
};

// The body itself, on top: Fastify gathers its chunks, then joins them into one buffer.
const BODY_COPIES = 2;

/** What any request with a body costs besides it: socket buffers, the request and reply objects. */
export const REQUEST_OVERHEAD_BYTES = 64 * 1024;

/** A worker thread's young generation fills before it is collected: a large body pays for it. */
export const OFFLOADED_OVERHEAD_BYTES = 16 * 1024 * 1024;

// A batch may mix every kind of operation: it is estimated as the costliest kind.
const COSTLIEST = Math.max(...Object.values(PEAK_BYTES_PER_BODY_BYTE));

/**
 * The memory reserved for a request to `operation` (or a batch) with a body of `bodyBytes`,
 * answered in the worker threads (`offloaded`) or on the event loop.
 *
 * @example
 * estimatePeakBytes('sort', 1024 * 1024, true) //=> 46 MiB (16 MiB + 30 × 1 MiB) and 64 KiB
 */
export function estimatePeakBytes(operation: OperationId | 'batch', bodyBytes: number, offloaded: boolean): number {
  const fixed = REQUEST_OVERHEAD_BYTES + (offloaded ? OFFLOADED_OVERHEAD_BYTES : 0);
  const perByte = operation === 'batch' ? COSTLIEST : PEAK_BYTES_PER_BODY_BYTE[OPERATIONS[operation].memory];
  return fixed + bodyBytes * (BODY_COPIES + perByte);
}

// What a stream holds besides its line: the chunk being read, the answers waiting to be written
// (a piece, the response's buffer, the socket's), each about 64 KiB.
const STREAM_BUFFERS_BYTES = 6 * 64 * 1024;

/**
 * The memory a stream holds for as long as it runs, whatever its length: its longest line
 * answered on the event loop (as the costliest kind of operation), and its buffers.
 *
 * @example
 * streamPeakBytes(64 * 1024) //=> 2.7 MiB
 */
export function streamPeakBytes(maxLineBytes: number): number {
  return REQUEST_OVERHEAD_BYTES + STREAM_BUFFERS_BYTES + maxLineBytes * (BODY_COPIES + COSTLIEST);
}

/** A form that carries many operations, or one operation. */
export type AdmittedRoute = OperationId | ManyForm;
