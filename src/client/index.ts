import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Static } from 'typebox';
import { DEFAULT_PREFIX, OPERATIONS as DECLARED, servedAt, type Operation, type PathForm } from '../operations/index.js';

type Declared = typeof DECLARED;

/**
 * Each operation's input (its JSON body, or the path parameter of its GET form) and its 200 answer,
 * read from the TypeBox schemas that validate them in the service (src/operations): a schema change
 * is a type change here, with nothing to generate.
 */
export type Operations = {
  [Id in keyof Declared]: { input: Static<Declared[Id]['body']>; output: Static<Declared[Id]['result']> };
} & {
  [Id in keyof Declared as Declared[Id]['byPath'] extends PathForm ? `${Id}ByPath` : never]: {
    input: { number: string };
    output: Static<Declared[Id]['result']>;
  };
};

interface Call {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly input: 'body' | 'path';
}

/** How each method is called: a POST per operation, and a GET where it has a path form. */
const CALLS: ReadonlyArray<[string, Call]> = Object.entries(DECLARED as Readonly<Record<string, Operation>>).flatMap(([id, operation]) => {
  const path = servedAt(operation);
  const post: [string, Call] = [id, { method: 'POST', path, input: 'body' }];
  return operation.byPath === undefined ? [post] : [post, [`${id}ByPath`, { method: 'GET', path: `${path}/{number}`, input: 'path' }]];
});

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

  constructor(problem: { type?: string; title?: string; status: number; detail?: string; errors?: ProblemField[] }) {
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
}

/** The operations a batch or a stream can carry: the current ones with a body. */
export type BatchOperationName = Exclude<keyof Operations, `${string}ByPath` | `legacy${string}`>;

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
  stream(operations: Iterable<StreamLine> | AsyncIterable<StreamLine>, options?: Pick<CallOptions, 'signal'>): AsyncGenerator<Answer>;
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
  const client: Record<string, unknown> = {};
  const methods: Array<[string, Call]> = [...CALLS, ['batch', { method: 'POST', path: `${DEFAULT_PREFIX}/batch`, input: 'body' }]];
  for (const [name, operation] of methods) {
    client[name] = async (input: unknown, call: CallOptions = {}) => {
      const path =
        operation.input === 'path'
          ? operation.path.replace(/\{(\w+)\}/g, (_match, key: string) => encodeURIComponent((input as Record<string, string>)[key] ?? ''))
          : operation.path;
      const url = `${base}${path}`;
      const body = name === 'batch' ? { operations: input } : input;
      const timeoutMs = call.timeoutMs ?? options.timeoutMs;
      const signals = [call.signal, timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs)].filter((s) => s !== undefined);
      let response: Response;
      let text: string;
      try {
        response = await send(url, {
          method: operation.method,
          headers: { ...options.headers, ...(operation.input === 'body' ? { 'content-type': 'application/json' } : {}) },
          ...(operation.input === 'body' ? { body: JSON.stringify(body) } : {}),
          ...(signals.length === 0 ? {} : { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) }),
        });
        text = await response.text();
      } catch (error) {
        if (call.signal?.aborted === true) throw call.signal.reason;
        const asked = `${operation.method} ${url}`;
        if ((error as Error).name === 'TimeoutError') throw new ClientError(`No answer from ${asked} within ${timeoutMs} ms`, url, { cause: error });
        throw new ClientError(`Cannot reach ${asked}: ${causeOf(error)}`, url, { cause: error });
      }
      if (!response.ok) throw new ProblemError(problemIn(text, response.status, response.statusText));
      const answer = JSON.parse(text) as unknown;
      return name === 'batch' ? (answer as { answers: unknown }).answers : answer;
    };
  }
  client.stream = (operations: Iterable<StreamLine> | AsyncIterable<StreamLine>, call: Pick<CallOptions, 'signal'> = {}) =>
    streamAnswers(send, `${base}${DEFAULT_PREFIX}/stream`, operations, options.headers, call.signal);
  return client as Client;
}

// Lines given at once (an array) go in pieces of about this many characters; lines given one at a time go as they come.
const STREAM_PIECE_CHARS = 64 * 1024;

async function* streamAnswers(
  send: typeof fetch,
  url: string,
  operations: Iterable<StreamLine> | AsyncIterable<StreamLine>,
  headers: Readonly<Record<string, string>> | undefined,
  signal: AbortSignal | undefined,
): AsyncGenerator<Answer> {
  const synchronous = Symbol.iterator in operations;
  const iterator = synchronous ? operations[Symbol.iterator]() : operations[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = '';
      do {
        const next = await iterator.next();
        if (next.done === true) {
          if (text !== '') controller.enqueue(encoder.encode(text));
          return controller.close();
        }
        text += `${typeof next.value === 'string' ? next.value : JSON.stringify(next.value)}\n`;
      } while (synchronous && text.length < STREAM_PIECE_CHARS);
      controller.enqueue(encoder.encode(text));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  let response: Response;
  try {
    // `duplex: 'half'` is how fetch takes a streamed body; undici reads the answers while it still sends.
    response = await send(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
      signal,
    });
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    throw new ClientError(`Cannot reach POST ${url}: ${causeOf(error)}`, url, { cause: error });
  }
  if (!response.ok || response.body === null) {
    const text = await response.text();
    throw new ProblemError(problemIn(text, response.status, response.statusText));
  }
  // readline splits the answer lines; a line cut by a dropped connection fails JSON.parse or the read itself.
  const input = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  let answered = 0;
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      let answer: Answer;
      try {
        answer = JSON.parse(line) as Answer;
      } catch (error) {
        throw new ClientError(`The answers from POST ${url} broke off after ${answered} lines: the next line is not JSON`, url, { cause: error });
      }
      const interrupted = 'problem' in answer ? shutdownOf(answer.problem) : undefined;
      if (interrupted !== undefined) throw interrupted;
      answered++;
      yield answer;
    }
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    if (error instanceof ProblemError || error instanceof ClientError) throw error;
    throw new ClientError(`The answers from POST ${url} broke off after ${answered} lines: ${causeOf(error)}`, url, { cause: error });
  } finally {
    // Also when the caller stops early: the response is not read any further.
    input.destroy();
  }
}

/** The error a stream's last line gives when the service ended it at shutdown (a 503 that says how many lines were answered). */
function shutdownOf(problem: Problem): StreamInterruptedError | undefined {
  const { answered, retryAfter } = problem as Problem & { answered?: unknown; retryAfter?: unknown };
  if (problem.status !== 503 || typeof answered !== 'number') return undefined;
  return new StreamInterruptedError(problem, answered, typeof retryAfter === 'number' ? retryAfter : 1);
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
