// The errors a call rejects with, and how they are made from what the service answered.

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
 * The service could not be asked or its answer did not arrive whole: unreachable (the cause says
 * why, such as ECONNREFUSED), no answer within the timeout, or an answer that broke off. `reached`
 * says whether the service answered at all, and the message says the same in words.
 *
 * @example
 * try { await client.isEven({ input: 2 }) } catch (e) { if (e instanceof ClientError) e.message }
 * //=> 'Cannot reach POST http://127.0.0.1:1/api/isEven: connect ECONNREFUSED 127.0.0.1:1 (the service was not reached)'
 */
export class ClientError extends Error {
  override name = 'ClientError';
  /** Whether the service answered this call at all: true when its answer began, then failed or came too late. */
  readonly reached: boolean;
  constructor(
    message: string,
    readonly url: string,
    options: { cause: unknown; reached?: boolean },
  ) {
    super(message, { cause: options.cause });
    this.reached = options.reached ?? false;
  }
}

/** RFC 9457 Problem Details, as a batch or a stream answers a bad operation. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: ProblemField[];
}

/** The error a stream's last line gives when the service ended it at shutdown (a 503 that says how many lines were answered). */
export function shutdownOf(problem: Problem): StreamInterruptedError | undefined {
  const { answered, retryAfter } = problem as Problem & { answered?: unknown; retryAfter?: unknown };
  if (problem.status !== 503 || typeof answered !== 'number') return undefined;
  return new StreamInterruptedError(problem, answered, typeof retryAfter === 'number' ? retryAfter : 1);
}

// Causes that mean no connection to the service was made: undici's codes (Node.js), Bun's names.
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ConnectionRefused']);

/** Whether the service was reached, in words, for a call that got no answer. */
function unansweredBecause(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause ?? error;
  return NOT_CONNECTED.has((cause as { code?: string }).code ?? '') ? 'the service was not reached' : 'no answer from the service arrived';
}

/** The error of a request that got no answer at all, naming it, why, and whether the service was reached. */
export function unreachable(method: string, url: string, error: unknown): ClientError {
  return new ClientError(`Cannot reach ${method} ${url}: ${causeOf(error)} (${unansweredBecause(error)})`, url, { cause: error });
}

/** The error of a call whose answer had not arrived whole when its timeout passed. */
export function timedOut(method: string, url: string, timeoutMs: number | undefined, answerBegan: boolean, error: unknown): ClientError {
  const state = answerBegan ? 'the service answered; the rest of its answer did not arrive in time' : 'no answer from the service arrived';
  return new ClientError(`No answer from ${method} ${url} within ${timeoutMs} ms (${state})`, url, { cause: error, reached: answerBegan });
}

/** The error of an answer that began, then broke off. */
export function brokeOff(method: string, url: string, error: unknown): ClientError {
  return new ClientError(`The answer from ${method} ${url} broke off: ${causeOf(error)} (the service answered; the connection failed)`, url, {
    cause: error,
    reached: true,
  });
}

/** Why fetch failed, in its own words: undici's "fetch failed" keeps the reason (ECONNREFUSED...) in its cause. */
export function causeOf(error: unknown): string {
  const cause = (error as { cause?: { message?: string; code?: string } }).cause;
  return cause?.message ?? cause?.code ?? (error as Error).message;
}

/** The problem in an error answer's body; a body that is not one (a proxy's page) becomes one. */
export function problemIn(text: string, status: number, statusText: string): ConstructorParameters<typeof ProblemError>[0] {
  try {
    const problem = JSON.parse(text) as { status?: unknown };
    if (typeof problem === 'object' && problem !== null) return { ...problem, status };
  } catch {
    // not JSON: a proxy's error page, say
  }
  return { status, title: statusText, detail: text || statusText };
}
