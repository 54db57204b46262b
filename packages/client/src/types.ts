// The client's public types: its options, the batch's and the stream's operations and answers, the client itself.
import type { BATCH_OPERATIONS, Operations } from './operations.js';
import type { Problem } from './errors.js';

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
