// The client's batching (ClientOptions.batch): calls made close together go as one POST /api/batch.
import { BATCH_OPERATIONS } from './operations.js';
import { brokeOff, ClientError, ProblemError, timedOut, unreachable, type Problem } from './errors.js';
import type { Answer, BatchOptions, CallOptions } from './types.js';

export type Exchange = (method: 'GET' | 'POST', url: string, body: string | undefined, call: CallOptions) => Promise<unknown>;

export const CURRENT: ReadonlySet<string> = new Set(BATCH_OPERATIONS);
// A call whose body is longer than this goes alone (the service's OFFLOAD_BODY_BYTES, 64 KiB by default).
export const BATCH_ITEM_MAX_CHARS = 64 * 1024;
// A batch is sent once its bodies reach this many characters, whatever its count.
const BATCH_MAX_CHARS = 1024 * 1024;

// "The same turn of the event loop" is Node.js's and Bun's setImmediate where there is one; elsewhere a timeout of 0.
const IMMEDIATE = (() => {
  const scope = globalThis as { setImmediate?: (run: () => void) => unknown; clearImmediate?: (handle: unknown) => void };
  const { setImmediate: set, clearImmediate: clear } = scope;
  return set === undefined || clear === undefined ? undefined : { set: (run: () => void) => set(run), clear: (handle: unknown) => clear(handle) };
})();

/** A call waiting for its answer from a batch. */
interface Joined {
  readonly item: string;
  readonly body: string;
  readonly url: string;
  /** Ends the call with its answer or its error, once; later outcomes are ignored. */
  settle(outcome: { value: unknown } | { error: unknown }): void;
  readonly settled: () => boolean;
  /** Aborted once the call has failed (by its own timeout or signal among others), so that nothing still waits for it. */
  readonly gone: AbortSignal;
}

/**
 * The batching of a client (`ClientOptions.batch`): gathers calls, sends them as one
 * `POST /api/batch`, and gives each call what its single endpoint would have answered.
 */
export function batching(settings: BatchOptions, batchUrl: string, exchange: Exchange, clientTimeoutMs: number | undefined) {
  const maxDelayMs = settings.maxDelayMs ?? 0;
  const maxOperations = settings.maxOperations ?? 1000;
  // setTimeout takes at most 2^31 - 1 ms; a longer delay would fire at once.
  if (!(maxDelayMs >= 0 && maxDelayMs <= 2 ** 31 - 1))
    throw new TypeError(`batch.maxDelayMs must be a number of milliseconds from 0 to 2147483647, not ${maxDelayMs}`);
  if (!Number.isInteger(maxOperations) || maxOperations < 1) throw new TypeError(`batch.maxOperations must be an integer from 1, not ${maxOperations}`);

  let waiting: Joined[] = [];
  let chars = 0;
  let cancelTimer: (() => void) | undefined;

  const flush = (): void => {
    cancelTimer?.();
    cancelTimer = undefined;
    const calls = waiting.filter((joined) => !joined.settled());
    waiting = [];
    chars = 0;
    if (calls.length === 1) alone(calls[0] as Joined);
    else if (calls.length > 1) void together(calls);
  };

  const alone = (joined: Joined): void => {
    exchange('POST', joined.url, joined.body, { signal: joined.gone }).then(
      (value) => joined.settle({ value }),
      (error: unknown) => joined.settle({ error }),
    );
  };

  const together = async (calls: Joined[]): Promise<void> => {
    const stop = new AbortController();
    // When every call has ended on its own (timeouts, signals), the batch is not waited for.
    for (const joined of calls) joined.gone.addEventListener('abort', () => calls.every((c) => c.settled()) && stop.abort(), { once: true });
    let answers: Answer[];
    try {
      answers = ((await exchange('POST', batchUrl, `{"operations":[${calls.map((c) => c.item).join(',')}]}`, { signal: stop.signal })) as { answers: Answer[] })
        .answers;
    } catch (error) {
      if (stop.signal.aborted) return;
      for (const joined of calls) {
        if (error instanceof ProblemError && error.status >= 400 && error.status < 500 && error.status !== 429) {
          // The batch as a whole was refused (too large for the body or memory limit, say): each call alone gets its own answer.
          alone(joined);
        } else if (error instanceof ProblemError) {
          joined.settle({ error: new ProblemError(error) });
        } else if (error instanceof ClientError) {
          joined.settle({ error: (error.reached ? brokeOff : unreachable)('POST', joined.url, error.cause) });
        } else {
          joined.settle({ error });
        }
      }
      return;
    }
    calls.forEach((joined, i) => {
      const answer = answers[i] as Answer;
      joined.settle('result' in answer ? { value: answer.result } : { error: new ProblemError(reRooted(answer.problem, `/operations/${i}`)) });
    });
  };

  return (name: string, body: string, url: string, call: CallOptions): Promise<unknown> =>
    new Promise((resolve, reject) => {
      // As fetch does: an aborted call rejects with its signal's reason, whatever that is.
      if (call.signal?.aborted === true) return reject(call.signal.reason as Error);
      const gone = new AbortController();
      let settled = false;
      const timeoutMs = call.timeoutMs ?? clientTimeoutMs;
      const timeout =
        timeoutMs === undefined ? undefined : setTimeout(() => settle({ error: timedOut('POST', url, timeoutMs, false, new Error('timeout')) }), timeoutMs);
      const onAbort = () => settle({ error: call.signal?.reason });
      call.signal?.addEventListener('abort', onAbort, { once: true });
      function settle(outcome: { value: unknown } | { error: unknown }): void {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        call.signal?.removeEventListener('abort', onAbort);
        if ('value' in outcome) resolve(outcome.value);
        else {
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what the single call would reject with: a signal's reason may be anything
          reject(outcome.error);
          gone.abort();
        }
      }
      const item = body === '{}' ? `{"operation":${JSON.stringify(name)}}` : `{"operation":${JSON.stringify(name)},${body.slice(1)}`;
      waiting.push({ item, body, url, settle, settled: () => settled, gone: gone.signal });
      chars += item.length;
      if (waiting.length >= maxOperations || chars >= BATCH_MAX_CHARS) flush();
      else if (cancelTimer === undefined) {
        if (maxDelayMs === 0 && IMMEDIATE !== undefined) {
          const immediate = IMMEDIATE.set(flush);
          cancelTimer = () => IMMEDIATE.clear(immediate);
        } else {
          const timer = setTimeout(flush, maxDelayMs);
          cancelTimer = () => clearTimeout(timer);
        }
      }
    });
}

/**
 * A batch answer's problem as the single endpoint gives it: its words are the single endpoint's
 * already, and its pointers, rooted at the item in the batch (`/operations/3/input`), go back to
 * the request body (`/input`).
 */
function reRooted(problem: Problem, root: string): Problem {
  if (problem.errors === undefined) return problem;
  const errors = problem.errors.map(({ pointer, detail }) => ({ pointer: pointer.startsWith(root) ? pointer.slice(root.length) : pointer, detail }));
  return { ...problem, errors };
}
