import v8 from 'node:v8';
import vm from 'node:vm';

// V8 exposes its full collection as `gc` in contexts made after this flag is set.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as (options?: { type: 'minor' }) => void;

/** A full garbage collection of this thread's heap, now. */
export function collectGarbage(): void {
  gc();
}

/**
 * A collection of the young generation only (a scavenge), now: about a millisecond, where a
 * full one takes 15 to 20 after a large body's task; it frees what was allocated and dropped
 * since the last one, not what lived long enough to move to the old generation.
 */
export function collectYoungGarbage(): void {
  gc({ type: 'minor' });
}

/**
 * Asks for one full collection `delayMs` after the last call: a large answer's buffers become
 * garbage once written, but with only small requests coming after it nothing makes V8 collect
 * them, and the process would hold their memory long after the budget gave it back.
 */
export function collectGarbageSoon(delayMs: number): void {
  if (pending !== undefined) pending.refresh();
  else pending = setTimeout(() => ((pending = undefined), gc()), delayMs).unref();
}
let pending: NodeJS.Timeout | undefined;
