import { readFileSync, writeFileSync } from 'node:fs';
import { DEFAULT_CONFIG } from '../src/config.js';
import type { BodyOperationId } from '../src/http/body-operations.js';
import { answerBody } from '../src/http/offload-worker.js';
import { bodyOfShape } from './memory-shapes.js';

/**
 * One measurement, in a fresh process (`scripts/measure-memory.ts` and the memory-estimate test
 * start it): the peak memory, over the memory before, of answering one body as the worker
 * threads do. Prints one JSON line: operation, shape, body bytes, peak bytes, answer status.
 * Linux only: it resets the peak (VmHWM) by writing 5 to /proc/self/clear_refs.
 */

const [operation, shape, size] = process.argv.slice(2) as [BodyOperationId, string, string];
const limits = { sortMaxLength: DEFAULT_CONFIG.sortMaxLength, numberTextLimit: DEFAULT_CONFIG.numberTextLimit, stringSplitMaxParts: DEFAULT_CONFIG.stringSplitMaxParts };
const task = (bytes: Uint8Array) => ({ operation, bytes, limits, maxDepth: DEFAULT_CONFIG.maxDepth });
const kib = (field: string): number => Number(/(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8').split('\n').find((line) => line.startsWith(field)) ?? '')?.[1]) * 1024;
const gc = globalThis.gc as () => void;

answerBody(task(bodyOfShape(operation, shape, 4096))); // compiles the code and the validator first
const bytes = bodyOfShape(operation, shape, Number(size));
gc();
gc();
writeFileSync('/proc/self/clear_refs', '5');
const before = kib('VmRSS:');
const outcome = answerBody(task(bytes));
const peak = kib('VmHWM:');
const status = 'json' in outcome ? 200 : outcome.problem.status;
process.stdout.write(`${JSON.stringify({ operation, shape, bodyBytes: bytes.length, peakBytes: peak - before, status })}\n`);
