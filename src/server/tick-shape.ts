import { executionAsyncResource } from 'node:async_hooks';

const held: object[] = [];

/**
 * Keeps one of `process.nextTick`'s tick objects alive for the life of the process, and returns
 * what holds it (filled on the next tick). Node builds each tick object from a literal with
 * computed (symbol) keys. A process that had been through mixed traffic (large sorts among small
 * requests) was seen, under callgrind, defining every tick object's keys in V8's runtime: 30,000
 * instructions a request for S1 instead of 2,000, in the service and in bare Fastify alike; with
 * one tick object held, in neither (docs/performance.md, "Drift": what was measured, and why this
 * is the likely reason: the shape such objects start from lives only while one of them does).
 *
 * @example
 * holdTickObjectShape(); // once, as the process starts
 */
export function holdTickObjectShape(): readonly object[] {
  // Inside a nextTick callback the execution's resource is that callback's tick object (node:async_hooks).
  if (held.length === 0) process.nextTick(() => held.length === 0 && held.push(executionAsyncResource()));
  return held;
}
