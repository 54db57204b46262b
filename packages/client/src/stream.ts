// The client's NDJSON stream (POST /api/stream): lines sent as the iterable gives them, answers read as they arrive.
import { ClientError, ProblemError, problemIn, shutdownOf, unreachable, causeOf } from './errors.js';
import type { Answer, StreamLine, StreamOptions } from './types.js';

// Lines given at once (an array) go in pieces of about this many characters; lines given one at a time go as they come.
const STREAM_PIECE_CHARS = 64 * 1024;

export async function* streamAnswers(
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
    if (typeof body !== 'string' && (await refusedToStream(send, url, error, signal))) {
      throw new ClientError(
        `POST ${url} was not sent: this runtime streams a request body only over HTTP/2, and the service was reached over HTTP/1.1 ` +
          `(it answered a HEAD request); pass { wholeBody: true } to send the lines as one body (${causeOf(error)})`,
        url,
        { cause: error },
      );
    }
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
      throw new ClientError(`The answers from POST ${url} broke off after ${answered} lines: the next line is not JSON`, url, { cause: error, reached: true });
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
    throw new ClientError(`The answers from POST ${url} broke off after ${answered} lines: ${causeOf(error)}`, url, { cause: error, reached: true });
  } finally {
    // Also when the caller stops early: the response is not read any further.
    void reader.cancel().catch(() => undefined);
  }
}

/**
 * Whether a streamed request failed only because the runtime would not stream its body: browsers
 * stream a request body only over HTTP/2 and fail at once with a bare TypeError ("Failed to
 * fetch") over HTTP/1.1. undici, Deno and Bun give their network errors a cause. Told apart from
 * an unreachable service by one HEAD request, which the service answers.
 */
async function refusedToStream(send: typeof fetch, url: string, error: unknown, signal: AbortSignal | undefined): Promise<boolean> {
  if (!(error instanceof TypeError) || error.cause !== undefined) return false;
  try {
    await send(url, { method: 'HEAD', mode: 'no-cors', ...(signal === undefined ? {} : { signal }) });
    return true;
  } catch {
    return false;
  }
}
