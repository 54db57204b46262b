import { readFileSync, writeFileSync } from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { DEFAULT_CONFIG } from '../src/config.js';
import type { OperationId } from '../src/operations/index.js';
import { THREAD_RESOURCE_LIMITS } from '../src/http/memory/offload-pool.js';
import { answerBody } from '../src/http/memory/offload-worker.js';
import { bodyOfShape } from './memory-shapes.js';

/**
 * One measurement, in a fresh process (`scripts/measure-memory.ts` and the memory-estimate test
 * start it): the peak memory, over the memory before, of answering one body in a worker thread
 * with the pool's resource limits, as the service does. Prints one JSON line: operation, shape,
 * body bytes, peak bytes, answer status. Linux only: the peak (VmHWM) is reset by writing 5 to
 * /proc/self/clear_refs. Started with --expose-gc, so that what came before is collected before measuring.
 */
const collectGarbage = globalThis.gc as () => void;

interface Job {
  operation: OperationId;
  shape: string;
  size: number;
}

const limits = {
  sortMaxLength: DEFAULT_CONFIG.sortMaxLength,
  numberTextLimit: DEFAULT_CONFIG.numberTextLimit,
  stringSplitMaxParts: DEFAULT_CONFIG.stringSplitMaxParts,
  maxDepth: DEFAULT_CONFIG.maxDepth,
  batchMaxOperations: DEFAULT_CONFIG.batchMaxOperations,
};
const kib = (field: string): number =>
  Number(
    /(\d+) kB/.exec(
      readFileSync('/proc/self/status', 'utf8')
        .split('\n')
        .find((line) => line.startsWith(field)) ?? '',
    )?.[1],
  ) * 1024;

if (isMainThread) {
  const [operation, shape, size] = process.argv.slice(2) as [OperationId, string, string];
  const worker = new Worker(new URL('./memory-probe-thread.cjs', import.meta.url), {
    workerData: { operation, shape, size: Number(size) } satisfies Job,
    resourceLimits: THREAD_RESOURCE_LIMITS(4096),
  });
  let before = 0;
  worker.on('message', (message: { ready?: number; status?: number; bodyBytes?: number }) => {
    if (message.ready !== undefined) {
      collectGarbage();
      writeFileSync('/proc/self/clear_refs', '5');
      before = kib('VmRSS:');
      worker.postMessage('go');
      return;
    }
    const peak = kib('VmHWM:');
    process.stdout.write(`${JSON.stringify({ operation, shape, bodyBytes: message.bodyBytes, peakBytes: peak - before, status: message.status })}\n`);
    void worker.terminate();
  });
} else {
  const { operation, shape, size } = workerData as Job;
  const task = (bytes: Uint8Array) => ({ operation, bytes, limits, maxDepth: DEFAULT_CONFIG.maxDepth });
  answerBody(task(bodyOfShape(operation, shape, 4096))); // compiles the code and the validator first
  const bytes = bodyOfShape(operation, shape, size);
  collectGarbage();
  parentPort?.once('message', () => {
    const outcome = answerBody(task(bytes));
    parentPort?.postMessage({ status: 'json' in outcome ? 200 : outcome.problem.status, bodyBytes: bytes.length });
  });
  parentPort?.postMessage({ ready: bytes.length });
}
