import { OPERATIONS, type Operations } from './operations.generated.js';

export type { Operations } from './operations.generated.js';

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

export interface ClientOptions {
  /** Where the service is, such as `http://127.0.0.1:3000`. */
  readonly baseUrl: string | URL;
  /** A `fetch` to use instead of the global one. */
  readonly fetch?: typeof fetch;
  /** Headers sent with every request, such as `x-request-id`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** One method per operation of the OpenAPI document: its input in, its 200 response out. */
export type Client = { [Name in keyof Operations]: (input: Operations[Name]['input']) => Promise<Operations[Name]['output']> };

/**
 * A typed client for the service; every method resolves with the response body or rejects with a
 * `ProblemError`. Send big integers as strings to keep every digit: a JavaScript number cannot.
 *
 * @example
 * const client = createClient({ baseUrl: 'http://127.0.0.1:3000' });
 * await client.isOdd({ input: '9007199254740993' }); //=> { ret: true }
 * await client.sort({ input: [3, 1, 2] });           //=> { sortedArray: [1, 2, 3] }
 */
export function createClient(options: ClientOptions): Client {
  const send = options.fetch ?? fetch;
  const base = String(options.baseUrl).replace(/\/+$/, '');
  const client: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const [name, operation] of Object.entries(OPERATIONS)) {
    client[name] = async (input: unknown) => {
      const path =
        operation.input === 'path'
          ? operation.path.replace(/\{(\w+)\}/g, (_match, key: string) => encodeURIComponent((input as Record<string, string>)[key] ?? ''))
          : operation.path;
      const response = await send(`${base}${path}`, {
        method: operation.method,
        headers: { ...options.headers, ...(operation.input === 'body' ? { 'content-type': 'application/json' } : {}) },
        ...(operation.input === 'body' ? { body: JSON.stringify(input) } : {}),
      });
      const text = await response.text();
      if (!response.ok) throw new ProblemError(problemIn(text, response.status, response.statusText));
      return JSON.parse(text) as unknown;
    };
  }
  return client as Client;
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
