import { OPERATIONS, type Operation } from '../../operations/index.js';

/**
 * Peak memory of answering a request, from the size of its body and the memory factor each
 * operation declares (src/operations, `memory`: peak bytes per body byte, measured by
 * `npm run measure:memory`). The measurements are in docs/operations.md (Reliability).
 */

// The body itself, on top: Fastify gathers its chunks, then joins them into one buffer.
const BODY_COPIES = 2;

/** What any request with a body costs besides it: socket buffers, the request and reply objects. */
const REQUEST_OVERHEAD_BYTES = 64 * 1024;

/** A worker thread's young generation fills before it is collected: a large body pays for it. */
const OFFLOADED_OVERHEAD_BYTES = 16 * 1024 * 1024;

/** A batch may mix every kind of operation: it is estimated as the costliest kind. */
export const COSTLIEST_BYTES_PER_BYTE = Math.max(...Object.values(OPERATIONS as Readonly<Record<string, Operation>>).map((operation) => operation.memory));

/**
 * The memory reserved for a request whose body of `bodyBytes` costs `perByte` per byte at its
 * peak, answered in the worker threads (`offloaded`) or on the event loop.
 *
 * @example
 * estimatePeakBytes(OPERATIONS.sort.memory, 1024 * 1024, true) //=> 46 MiB (16 MiB + 30 × 1 MiB) and 64 KiB
 */
export function estimatePeakBytes(perByte: number, bodyBytes: number, offloaded: boolean): number {
  const fixed = REQUEST_OVERHEAD_BYTES + (offloaded ? OFFLOADED_OVERHEAD_BYTES : 0);
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
  return REQUEST_OVERHEAD_BYTES + STREAM_BUFFERS_BYTES + maxLineBytes * (BODY_COPIES + COSTLIEST_BYTES_PER_BYTE);
}

/**
 * What a route holds in the memory budget while it answers (memory/memory-admission.ts), carried in its
 * config: a body costing `perByte` per byte at its peak, or a fixed reservation for as long as it
 * runs (a stream, whose body has no end known in advance).
 */
export type RouteMemory = { readonly perByte: number } | { readonly fixedBytes: number };
