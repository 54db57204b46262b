import { BATCH_OPERATIONS, CALLS, PREFIX, type Operations } from './operations.js';

export type { Operations } from './operations.js';
export type * from './operations.js';

/** One offending field of a request, as a JSON Pointer (RFC 6901). */
export interface ProblemField {
  pointer: string;
  detail: string;
}

/**
 * An error answer of the service: its RFC 9457 Problem Details, typed.
 *
 * @example
 * try { await client.isEven({ input: 2.5 }) } catch (e) { if (e instanceof ProblemError) e.status } //=> 400
 */
export class ProblemError extends Error {
  override name = 'ProblemError';
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors: readonly ProblemField[];

  constructor(problem: { type?: string; title?: string; status: number; detail?: string; errors?: readonly ProblemField[] }) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
    this.type = problem.type ?? 'about:blank';
    this.title = problem.title ?? `HTTP ${problem.status}`;
    this.status = problem.status;
    this.detail = problem.detail ?? this.title;
    this.errors = problem.errors ?? [];
  }
}

/**
 * A stream the service ended before every line was answered, because it was shutting down: the
 * first `answered` lines were answered (and yielded); send the ones after them again, in a new
 * stream, after `retryAfterSeconds` (another instance of the service will take it).
 *
 * @example
 * try { for await (const answer of client.stream(lines)) use(answer) }
 * catch (e) { if (e instanceof StreamInterruptedError) resumeFrom(e.answered) }
 */
export class StreamInterruptedError extends ProblemError {
  override name = 'StreamInterruptedError';
  constructor(
    problem: ConstructorParameters<typeof ProblemError>[0],
    readonly answered: number,
    readonly retryAfterSeconds: number,
  ) {
    super(problem);
  }
}

/**
 * The service could not be asked or did not answer: unreachable (the cause says why, such as
 * ECONNREFUSED), or no answer within the timeout. `url` is what was asked for.
 *
 * @example
 * try { await client.isEven({ input: 2 }) } catch (e) { if (e instanceof ClientError) e.message }
 * //=> 'Cannot reach POST http://127.0.0.1:1/api/isEven: connect ECONNREFUSED 127.0.0.1:1'
 */
export class ClientError extends Error {
  override name = 'ClientError';
  constructor(
    message: string,
    readonly url: string,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** Options of one call. */
export interface CallOptions {
  /** Longest wait for the whole answer, in milliseconds; then a `ClientError`. Overrides the client's. */
  readonly timeoutMs?: number;
  /** Aborts the call; it then rejects with the signal's reason, as `fetch` does. */
  readonly signal?: AbortSignal;
}

export interface ClientOptions {
  /** Where the service is, such as `http://127.0.0.1:3000`. */
  readonly baseUrl: string | URL;
  /** A `fetch` to use instead of the global one. */
  readonly fetch?: typeof fetch;
  /** Headers sent with every request, such as `x-request-id`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Longest wait for each whole answer, in milliseconds, unless a call says otherwise; none by default. */
  readonly timeoutMs?: number;
  /**
   * Calls of the single operations (`isEven`, `sort`, ...) made close together go to the service as
   * one `POST /api/batch`; each still resolves with its own answer or rejects with its own error,
   * as the single call would. Off by default.
   */
  readonly batch?: BatchOptions;
  /**
   * Request bodies of at least this many bytes go gzip-coded (`Content-Encoding: gzip`): an array
   * of random numbers about halves (docs/performance.md), repetitive data shrinks more.
   * Off by default. Coded answers are read whatever it says: `fetch` asks for them and decodes them.
   */
  readonly gzipBodiesFrom?: number;
}

export interface BatchOptions {
  /** How long the first call of a batch waits for others to join it, in milliseconds; 0 (the default): the calls made in the same turn of the event loop. */
  readonly maxDelayMs?: number;
  /** Most calls in one batch (1,000 by default); a full batch goes at once. Keep it within the service's `BATCH_MAX_OPERATIONS` (10,000 by default). */
  readonly maxOperations?: number;
}

/** Options of a stream. */
export interface StreamOptions {
  /** Aborts the stream: the request and the reading of its answers. */
  readonly signal?: AbortSignal;
  /**
   * Sends the lines as one body once the iterable has ended, instead of as they come; the answers
   * are still read as they arrive. For a runtime that streams a request body only over HTTP/2
   * (browsers) when the service is reached over HTTP/1.1.
   */
  readonly wholeBody?: boolean;
}

/** The operations a batch or a stream can carry: the current ones with a body. */
export type BatchOperationName = (typeof BATCH_OPERATIONS)[number];

/** One operation of a batch or a stream: its name in `operation`, beside its single endpoint's body. */
export type BatchOperation = { [Name in BatchOperationName]: { operation: Name } & Operations[Name]['input'] }[BatchOperationName];

/** One line of a stream: an operation, or its line already written (without the line break). */
export type StreamLine = BatchOperation | string;

/** RFC 9457 Problem Details, as a batch or a stream answers a bad operation. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: ProblemField[];
}

/** The answer to one operation of a batch or a stream: its single endpoint's 200 answer, or its problem; `'result' in answer` tells them apart. */
export type Answer<Name extends BatchOperationName = BatchOperationName> =
  { status: 200; result: Operations[Name]['output'] } | { status: number; problem: Problem };

/** The answers to a batch, each typed by the operation in its place. */
export type BatchAnswers<T extends readonly BatchOperation[]> = {
  -readonly [K in keyof T]: T[K] extends { operation: infer Name extends BatchOperationName } ? Answer<Name> : never;
};

/** One method per operation of the OpenAPI document (its input in, its 200 response out), and the batch and the stream. */
export type Client = {
  [Name in keyof Operations]: (input: Operations[Name]['input'], options?: CallOptions) => Promise<Operations[Name]['output']>;
} & {
  /**
   * Many operations in one request (`POST /api/batch`): the answers in order, each typed by its
   * operation. A bad operation gets its problem in its place; only a batch that is wrong as a whole rejects.
   */
  batch<const T extends readonly BatchOperation[]>(operations: T, options?: CallOptions): Promise<BatchAnswers<T>>;
  /**
   * A stream of operations (`POST /api/stream`, NDJSON): sends them as the iterable gives them and
   * yields each answer as it arrives, in order. Takes `signal`, not `timeoutMs`: a stream may rightly run long.
   * A string is sent as it is, as one line (JSON already written, or a line to be refused as it stands).
   */
  stream(operations: Iterable<StreamLine> | AsyncIterable<StreamLine>, options?: StreamOptions): AsyncGenerator<Answer>;
};

/**
 * A typed client for the service; every method resolves with the response body, or rejects with a
 * `ProblemError` (the service's error answer) or a `ClientError` (no answer: unreachable, or past
 * the timeout). Send big integers as strings to keep every digit: a JavaScript number cannot.
 *
 * @example
 * const client = createClient({ baseUrl: 'http://127.0.0.1:3000' });
 * await client.isOdd({ input: '9007199254740993' }); //=> { ret: true }
 * await client.sort({ input: [3, 1, 2] });           //=> { sortedArray: [1, 2, 3] }
 * await client.isEven({ input: 4 }, { timeoutMs: 500 });
 * const [even, sorted] = await client.batch([{ operation: 'isEven', input: 4 }, { operation: 'sort', input: [2, 1] }]);
 * for await (const answer of client.stream(numbers.map((input) => ({ operation: 'isOdd', input })))) console.log(answer);
 */
export function createClient(options: ClientOptions): Client {
  const send = options.fetch ?? fetch;
  const base = String(options.baseUrl).replace(/\/+$/, '');

  /** One request and its answer: the parsed 200 body, or a ProblemError, a ClientError or the signal's reason. */
  const exchange = async (method: 'GET' | 'POST', url: string, body: string | undefined, call: CallOptions): Promise<unknown> => {
    const timeoutMs = call.timeoutMs ?? options.timeoutMs;
    const signals = [call.signal, timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs)].filter((s) => s !== undefined);
    let response: Response;
    let text: string;
    try {
      const sent = body === undefined ? undefined : await coded(body, options.gzipBodiesFrom);
      response = await send(url, {
        method,
        headers: { ...options.headers, ...(sent === undefined ? {} : { 'content-type': 'application/json', ...sent.headers }) },
        ...(sent === undefined ? {} : { body: sent.body }),
        ...(signals.length === 0 ? {} : { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) }),
      });
      text = await response.text();
    } catch (error) {
      if (call.signal?.aborted === true) throw call.signal.reason;
      if ((error as Error).name === 'TimeoutError') throw new ClientError(`No answer from ${method} ${url} within ${timeoutMs} ms`, url, { cause: error });
      throw unreachable(method, url, error);
    }
    if (!response.ok) throw new ProblemError(problemIn(text, response.status, response.statusText));
    return JSON.parse(text) as unknown;
  };

  const batchUrl = `${base}${PREFIX}/batch`;
  const join = options.batch === undefined ? undefined : batching(options.batch, batchUrl, exchange, options.timeoutMs);
  const client: Record<string, unknown> = {};
  for (const [name, path] of CALLS) {
    client[name] = path.includes('{')
      ? (input: Record<string, string>, call: CallOptions = {}) =>
          exchange('GET', base + path.replace(/\{(\w+)\}/g, (_match, key: string) => encodeURIComponent(input[key] ?? '')), undefined, call)
      : (input: unknown, call: CallOptions = {}) => {
          const body = JSON.stringify(input);
          // Large bodies go alone: a batch is answered in one piece, and they would hold up the small ones.
          return join !== undefined && CURRENT.has(name) && body.length <= BATCH_ITEM_MAX_CHARS
            ? join(name, body, base + path, call)
            : exchange('POST', base + path, body, call);
        };
  }
  client.batch = async (operations: readonly BatchOperation[], call: CallOptions = {}) =>
    ((await exchange('POST', batchUrl, JSON.stringify({ operations }), call)) as { answers: unknown }).answers;
  client.stream = (operations: Iterable<StreamLine> | AsyncIterable<StreamLine>, call: StreamOptions = {}) =>
    streamAnswers(send, `${base}${PREFIX}/stream`, operations, options.headers, call);
  return client as Client;
}

type Exchange = (method: 'GET' | 'POST', url: string, body: string | undefined, call: CallOptions) => Promise<unknown>;

const CURRENT: ReadonlySet<string> = new Set(BATCH_OPERATIONS);
// A call whose body is longer than this goes alone (the service's OFFLOAD_BODY_BYTES, 64 KiB by default).
const BATCH_ITEM_MAX_CHARS = 64 * 1024;
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
function batching(settings: BatchOptions, batchUrl: string, exchange: Exchange, clientTimeoutMs: number | undefined) {
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
          joined.settle({ error: unreachable('POST', joined.url, error.cause) });
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
        timeoutMs === undefined
          ? undefined
          : setTimeout(
              () => settle({ error: new ClientError(`No answer from POST ${url} within ${timeoutMs} ms`, url, { cause: new Error('timeout') }) }),
              timeoutMs,
            );
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

// Lines given at once (an array) go in pieces of about this many characters; lines given one at a time go as they come.
const STREAM_PIECE_CHARS = 64 * 1024;

async function* streamAnswers(
  send: typeof fetch,
  url: string,
  operations: Iterable<StreamLine> | AsyncIterable<StreamLine>,
  headers: Readonly<Record<string, string>> | undefined,
  options: StreamOptions,
): AsyncGenerator<Answer> {
  const { signal } = options;
  const synchronous = Symbol.iterator in operations;
  const iterator = synchronous ? operations[Symbol.iterator]() : operations[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const lineOf = (value: StreamLine): string => `${typeof value === 'string' ? value : JSON.stringify(value)}\n`;
  let body: ReadableStream<Uint8Array> | string;
  if (options.wholeBody === true) {
    body = '';
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) body += lineOf(next.value);
  } else {
    body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let text = '';
        do {
          const next = await iterator.next();
          if (next.done === true) {
            if (text !== '') controller.enqueue(encoder.encode(text));
            return controller.close();
          }
          text += lineOf(next.value);
        } while (synchronous && text.length < STREAM_PIECE_CHARS);
        controller.enqueue(encoder.encode(text));
      },
      async cancel() {
        await iterator.return?.();
      },
    });
  }
  let response: Response;
  try {
    // `duplex: 'half'` is how fetch takes a streamed body; the answers are read while it still sends.
    response = await send(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-ndjson' },
      body,
      ...(typeof body === 'string' ? {} : { duplex: 'half' }),
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    throw unreachable('POST', url, error);
  }
  if (!response.ok || response.body === null) {
    const text = await response.text();
    throw new ProblemError(problemIn(text, response.status, response.statusText));
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let answered = 0;
  let rest = '';
  // A line cut by a dropped connection fails JSON.parse or the read itself.
  const answerIn = (line: string): Answer => {
    let answer: Answer;
    try {
      answer = JSON.parse(line) as Answer;
    } catch (error) {
      throw new ClientError(`The answers from POST ${url} broke off after ${answered} lines: the next line is not JSON`, url, { cause: error });
    }
    const interrupted = 'problem' in answer ? shutdownOf(answer.problem) : undefined;
    if (interrupted !== undefined) throw interrupted;
    answered++;
    return answer;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      rest += done === true ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = rest.split('\n');
      rest = done === true ? '' : (lines.pop() as string);
      for (const line of lines) if (line !== '') yield answerIn(line.endsWith('\r') ? line.slice(0, -1) : line);
      if (done === true) break;
    }
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    if (error instanceof ProblemError || error instanceof ClientError) throw error;
    throw new ClientError(`The answers from POST ${url} broke off after ${answered} lines: ${causeOf(error)}`, url, { cause: error });
  } finally {
    // Also when the caller stops early: the response is not read any further.
    void reader.cancel().catch(() => undefined);
  }
}

/** The error a stream's last line gives when the service ended it at shutdown (a 503 that says how many lines were answered). */
function shutdownOf(problem: Problem): StreamInterruptedError | undefined {
  const { answered, retryAfter } = problem as Problem & { answered?: unknown; retryAfter?: unknown };
  if (problem.status !== 503 || typeof answered !== 'number') return undefined;
  return new StreamInterruptedError(problem, answered, typeof retryAfter === 'number' ? retryAfter : 1);
}

/** The error of a request that could not be sent or answered at all, naming it and why. */
function unreachable(method: string, url: string, error: unknown): ClientError {
  return new ClientError(`Cannot reach ${method} ${url}: ${causeOf(error)}`, url, { cause: error });
}

/**
 * A request body as it is sent: gzip-coded when it has at least `from` bytes, by the web's
 * CompressionStream (Node.js and browsers alike), else as it is.
 */
async function coded(body: string, from: number | undefined): Promise<{ body: string | ArrayBuffer; headers: Record<string, string> }> {
  if (from === undefined) return { body, headers: {} };
  const bytes = new TextEncoder().encode(body);
  if (bytes.length < from) return { body, headers: {} };
  const gzipped = await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer();
  return { body: gzipped, headers: { 'content-encoding': 'gzip' } };
}

/** Why fetch failed, in its own words: undici's "fetch failed" keeps the reason (ECONNREFUSED...) in its cause. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { message?: string; code?: string } }).cause;
  return cause?.message ?? cause?.code ?? (error as Error).message;
}

function problemIn(text: string, status: number, statusText: string): ConstructorParameters<typeof ProblemError>[0] {
  try {
    const problem = JSON.parse(text) as { status?: unknown };
    if (typeof problem === 'object' && problem !== null) return { ...problem, status };
  } catch {
    // not JSON: a proxy's error page, say
  }
  return { status, title: statusText, detail: text || statusText };
}
