// Every feature of json-utility-client against the real service, bundled with the package's built
// module (esbuild) so that each runtime runs the same checks: Node.js, Deno, Bun, a browser page and
// a workerd worker (test/client-runtimes.test.ts). `client` is the package's module; `base` the
// service's URL; `streamsBodies` whether this runtime's fetch streams a request body to an HTTP/1.1
// server. Resolves with the names of the checks passed; throws naming the first that failed.
import type * as Package from '../../packages/client/src/index.js';

function equal(actual: unknown, expected: unknown, what: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: ${a}, expected ${e}`);
}

async function rejection(promise: Promise<unknown>, what: string): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error(`${what}: resolved, expected a rejection`);
}

/** A fetch that counts its requests and keeps each one's headers. */
function counting() {
  const sent: Array<{ url: string; headers: Headers }> = [];
  const send: typeof fetch = (url, init) => {
    sent.push({ url: url instanceof Request ? url.url : url.toString(), headers: new Headers(init?.headers) });
    return fetch(url, init);
  };
  return { sent, send };
}

export async function checks(client: typeof Package, base: string, streamsBodies: boolean): Promise<string[]> {
  const { createClient, ProblemError, ClientError } = client;
  const passed = [];
  const api = createClient({ baseUrl: base, timeoutMs: 10_000 });

  // Every operation, in its body form and, where it has one, its path form.
  equal(await api.sort({ input: [3, 'b', 1, 'a'] }), { sortedArray: [1, 3, 'a', 'b'] }, 'sort');
  equal(await api.isEven({ input: '9007199254740993' }), { ret: false }, 'isEven');
  equal(await api.isOdd({ input: 7 }), { ret: true }, 'isOdd');
  equal(await api.isNumber({ input: ' 0x1F ' }), { ret: true }, 'isNumber');
  equal(await api.toString({ input: { b: 1, a: [true] } }), { ret: '{"a":[true],"b":1}' }, 'toString');
  equal(await api.stringSplit({ input: { string: 'a,b,,c', seperator: ',' } }), { ret: ['a', 'b', '', 'c'] }, 'stringSplit');
  equal(await api.isEvenByPath({ number: '12' }), { ret: true }, 'isEvenByPath');
  equal(await api.isOddByPath({ number: '-7' }), { ret: true }, 'isOddByPath');
  equal(await api.isNumberByPath({ number: '1e3' }), { ret: true }, 'isNumberByPath');
  passed.push('every operation, body and path forms');

  // An error answer: a ProblemError, its pointer and words the single endpoint's.
  const problem = await rejection(api.isEven({ input: 2.5 }), 'isEven 2.5');
  if (!(problem instanceof ProblemError)) throw new Error(`isEven 2.5: ${String(problem)}, expected a ProblemError`);
  equal([problem.status, problem.errors[0]?.pointer, problem.errors[0]?.detail], [400, '/input', '/input must be an integer'], 'the problem');
  passed.push('ProblemError');

  // Batching: calls made together go as one request; each gets its own answer or error.
  const batched = counting();
  const batching = createClient({ baseUrl: base, fetch: batched.send, batch: { maxDelayMs: 5 } });
  const calls = [batching.isEven({ input: 4 }), batching.sort({ input: [2, 1] }), batching.isOdd({ input: 'x' }), batching.isEven({ input: 2.5 })];
  const outcomes = await Promise.allSettled(calls);
  equal(batched.sent.length, 1, 'requests for four batched calls');
  const [even, sortedPair, odd, half] = outcomes;
  equal(even?.status === 'fulfilled' && even.value, { ret: true }, 'batched isEven');
  equal(sortedPair?.status === 'fulfilled' && sortedPair.value, { sortedArray: [1, 2] }, 'batched sort');
  const inBatch: unknown = half?.status === 'rejected' ? half.reason : half;
  if (!(inBatch instanceof ProblemError)) throw new Error(`batched isEven 2.5: ${JSON.stringify(inBatch)}`);
  equal([inBatch.status, inBatch.detail, inBatch.errors], [problem.status, problem.detail, problem.errors], 'a batched problem, as the single call');
  const oddProblem: unknown = odd?.status === 'rejected' ? odd.reason : odd;
  equal(oddProblem instanceof ProblemError && oddProblem.errors[0]?.pointer, '/input', 'batched isOdd x');
  const [first, second] = await api.batch([
    { operation: 'isEven', input: 4 },
    { operation: 'isOdd', input: 'x' },
  ]);
  equal([first.status, second.status, 'problem' in second && second.problem.errors?.[0]?.pointer], [200, 400, '/operations/1/input'], 'client.batch');
  passed.push('batching');

  // Timeouts and signal.
  const big = { input: Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 100_003) };
  const late = await rejection(api.sort(big, { timeoutMs: 1 }), 'a 1 ms timeout');
  if (!(late instanceof ClientError) || !/within 1 ms/.test(late.message)) throw new Error(`a 1 ms timeout: ${String(late)}`);
  const stop = new AbortController();
  stop.abort(new Error('stopped by the caller'));
  const aborted = await rejection(api.isEven({ input: 4 }, { signal: stop.signal }), 'an aborted signal');
  equal(aborted instanceof Error && aborted.message, 'stopped by the caller', 'an aborted call rejects with its reason');
  passed.push('timeouts and signal');

  // gzip bodies: sent coded, answered as any other.
  const coded = counting();
  const gzipping = createClient({ baseUrl: base, fetch: coded.send, gzipBodiesFrom: 1024 });
  const sorted = await gzipping.sort({ input: Array.from({ length: 2000 }, (_, i) => 2000 - i) });
  equal([sorted.sortedArray[0], sorted.sortedArray.length], [1, 2000], 'a gzip body');
  equal(coded.sent[0]?.headers.get('content-encoding'), 'gzip', 'the gzip body was sent coded');
  passed.push('gzip bodies');

  // The NDJSON stream: each answer as it arrives.
  const lines: Package.StreamLine[] = [
    { operation: 'isEven', input: 4 },
    { operation: 'isOdd', input: 'x' },
    { operation: 'sort', input: [3, 1] },
  ];
  const streamed: Package.Answer[] = [];
  for await (const answer of api.stream(lines, { wholeBody: !streamsBodies })) streamed.push(answer);
  equal(
    streamed.map((answer) => answer.status),
    [200, 400, 200],
    'the stream',
  );
  const third = streamed[2];
  equal(third !== undefined && 'result' in third && third.result, { sortedArray: [1, 3] }, 'a streamed answer');
  if (!streamsBodies) {
    // Streamed anyway, the body is refused by the runtime: the error names the limit and the way out, and the service was reachable.
    const refused = await rejection(
      (async () => {
        for await (const answer of api.stream(lines)) void answer;
      })(),
      'a streamed body this runtime will not send',
    );
    if (!(refused instanceof ClientError) || !/only over HTTP\/2.*wholeBody: true/.test(refused.message) || refused.reached)
      throw new Error(`a streamed body this runtime will not send: ${String(refused)}`);
  }
  passed.push(streamsBodies ? 'the stream, its body streamed' : 'the stream, its body sent whole (this runtime streams a request body only over HTTP/2)');
  return passed;
}
