import { CALLS, PREFIX } from './operations.js';
import { brokeOff, ProblemError, problemIn, timedOut, unreachable } from './errors.js';
import { BATCH_ITEM_MAX_CHARS, batching, CURRENT } from './batching.js';
import { streamAnswers } from './stream.js';

import type { BatchOperation, CallOptions, Client, ClientOptions, StreamLine, StreamOptions } from './types.js';

export type * from './operations.js';
export type * from './types.js';
export { ClientError, ProblemError, StreamInterruptedError, type Problem, type ProblemField } from './errors.js';

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
    let response: Response | undefined;
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
      if ((error as Error).name === 'TimeoutError') throw timedOut(method, url, timeoutMs, response !== undefined, error);
      throw response === undefined ? unreachable(method, url, error) : brokeOff(method, url, error);
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
