import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import { test } from 'node:test';
import { DEFAULT_CONFIG } from '../../src/config.js';
import { collectGarbage, collectYoungGarbage } from '../../src/http/memory/collect-garbage.js';
import answerOffloaded, { IDLE_COLLECTION_MS, OLD_GARBAGE_BYTES, type OffloadTask } from '../../src/http/memory/offload-worker.js';
import { bodyOfShape } from '../../scripts/memory-shapes.js';

// The worker threads' task, called here in the test's own thread: what a task leaves in the heap
// after its answer is bounded, and an idle thread gives the rest back (offload-worker.ts).

const MIB = 1024 * 1024;
const limits = {
  sortMaxLength: DEFAULT_CONFIG.sortMaxLength,
  numberTextLimit: DEFAULT_CONFIG.numberTextLimit,
  stringSplitMaxParts: DEFAULT_CONFIG.stringSplitMaxParts,
};
const task = (operation: OffloadTask['operation'], shape: string, bytes: number): OffloadTask => ({
  operation,
  bytes: bodyOfShape(operation, shape, bytes),
  limits,
  maxDepth: DEFAULT_CONFIG.maxDepth,
});
const heapUsed = (): number => v8.getHeapStatistics().used_heap_size;

/** Garbage in the old generation, which a scavenge does not free: about 4.5 MiB of objects kept through two scavenges. */
function leaveOldGarbage(): void {
  const kept = new Array(100_000).fill(0).map((_, i) => ({ i }));
  collectYoungGarbage();
  collectYoungGarbage();
  assert.equal(kept.length, 100_000);
}

test('a task leaves at most OLD_GARBAGE_BYTES in the heap after it', async (t) => {
  answerOffloaded(task('sort', 'doubles', 64 * 1024)); // compiles the code and the validator first
  collectGarbage();
  const before = heapUsed();
  // Sizes either side of what a scavenge alone frees: 2 MB bodies leave little in the old
  // generation, 8 MB ones more than OLD_GARBAGE_BYTES, which a full collection then frees.
  for (const [operation, shape, bytes] of [
    ['sort', 'doubles', 2 * MIB],
    ['sort', 'objects', 8 * MIB],
    ['toString', 'unsortedObjects', 2 * MIB],
    ['sort', 'numbers', 8 * MIB],
    ['sort', 'doubles', 2 * MIB],
  ] as const) {
    answerOffloaded(task(operation, shape, bytes));
    const left = heapUsed() - before;
    t.diagnostic(`${operation} of ${shape}, ${bytes} bytes: ${(left / MIB).toFixed(1)} MiB left`);
    assert.ok(left <= OLD_GARBAGE_BYTES, `${operation} of ${shape}, ${bytes} bytes: ${(left / MIB).toFixed(1)} MiB left`);
  }
});

test('an idle thread collects what the last task left in the old generation', async () => {
  answerOffloaded(task('sort', 'doubles', 64 * 1024));
  collectGarbage();
  const before = heapUsed();
  leaveOldGarbage();
  answerOffloaded(task('sort', 'doubles', 64 * 1024));
  const left = heapUsed() - before;
  assert.ok(left > 2 * MIB && left <= OLD_GARBAGE_BYTES, `${(left / MIB).toFixed(1)} MiB left after the task`);
  await sleep(IDLE_COLLECTION_MS + 200);
  const idle = heapUsed() - before;
  assert.ok(idle <= 0.5 * MIB, `${(idle / MIB).toFixed(1)} MiB left once idle`);
});
