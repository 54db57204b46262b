import { SETTINGS, formatBytes } from '../config.js';

/**
 * Every error text that reports a limit, each naming the setting that raises it as the settings
 * table (config.ts) spells it, so that a renamed setting is renamed in every answer too.
 */

const named = (key: keyof typeof SETTINGS): string => `(${SETTINGS[key].env})`;
const RETRY = 'retry after the time in Retry-After';

export const LIMIT_TEXTS = {
  body: (bodyLimit: number) => `The request body is larger than the limit of ${bodyLimit} bytes ${named('bodyLimit')}`,
  decodedBody: (bodyLimit: number, coding: string) =>
    `The request body, decoded from ${coding}, is larger than the limit of ${bodyLimit} bytes ${named('bodyLimit')}; it was not decoded further`,
  pathValue: (numberTextLimit: number) =>
    `A path segment is longer than this service accepts: numbers are limited to ${numberTextLimit} characters ${named('numberTextLimit')}`,
  depth: (maxDepth: number) => `nests deeper than the limit of ${maxDepth} levels ${named('maxDepth')}`,
  sortLength: (length: number, limit: number) => `has ${length} elements; the limit is ${limit} ${named('sortMaxLength')}`,
  numberText: (length: number, limit: number) => `is ${length} characters long; numbers are limited to ${limit} characters ${named('numberTextLimit')}`,
  /** After the core's own words for how many parts the split reached. */
  splitParts: (coreMessage: string, limit: number) => `${coreMessage}; the limit is ${limit} ${named('stringSplitMaxParts')}`,
  rate: (max: number, window: string) => `Too many requests: the limit is ${max} per ${window} ${named('rateLimitMax')}; ${RETRY}`,
  memoryNeverFits: (bodyBytes: number, estimate: number, ceiling: number, memoryLimit: number) =>
    `Answering this ${bodyBytes}-byte body would take an estimated ${formatBytes(estimate)} of memory; ` +
    `one request may have at most ${formatBytes(ceiling)} of the ${formatBytes(memoryLimit)} memory limit ${named('memoryLimit')}. Send a smaller body`,
  methodNotAllowed: (method: string, path: string, allow: string) => `${method} is not allowed on ${path}; it accepts ${allow}`,
  headers: `The request headers are larger than this service accepts: 16 KiB, and room for a path value as long as ${SETTINGS.numberTextLimit.env} allows`,
  memoryNow: `The service has no memory free for this request now ${named('memoryLimit')}; ${RETRY}`,
  overloaded: `The service is overloaded ${named('maxEventLoopDelayMs')}; ${RETRY}`,
  overloadedNow: `The service is at capacity: this request would wait longer than it may to start ${named('overloadTargetMs')}; ${RETRY}`,
  requestTimeout: `The request was not received in time (${SETTINGS.headersTimeoutMs.env}, ${SETTINGS.requestTimeoutMs.env})`,
  batchOperations: (count: number, limit: number) =>
    `has ${count} operations; the limit is ${limit} ${named('batchMaxOperations')}. Send them in several batches`,
  streamLine: (limit: number) => `is longer than the limit of ${limit} bytes ${named('streamMaxLineBytes')}; it was skipped unread`,
  streamIdle: (idleMs: number) => `The stream sent nothing for ${idleMs} ms ${named('streamIdleTimeoutMs')}; the lines before this one were answered`,
  streamTotal: (totalMs: number) =>
    `The stream ran for its longest time of ${totalMs} ms ${named('streamTimeoutMs')}; the lines before this one were answered, send the rest in a new stream`,
  streamShutdown: (answered: number, retryAfterSeconds: number) =>
    `The service is shutting down: the first ${answered} lines of this stream were answered; send the lines after them in a new stream, after ${retryAfterSeconds} s (retryAfter)`,
  shuttingDown: `The service is shutting down and takes no new stream; ${RETRY}`,
  memoryInThread: `The service could not answer this body within its memory budget ${named('memoryLimit')} just now; ${RETRY}`,
} as const;
