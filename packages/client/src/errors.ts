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

/** The error of a request that could not be sent or answered at all, naming it and why. */
export function unreachable(method: string, url: string, error: unknown): ClientError {
  return new ClientError(`Cannot reach ${method} ${url}: ${causeOf(error)}`, url, { cause: error });
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
