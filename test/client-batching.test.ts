import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ClientError, ProblemError, createClient, type Client, type ClientOptions } from '../packages/client/src/index.js';
import { buildApp } from '../src/app.js';
import { silentServer } from './silent-server.js';

// createClient({ batch }) (docs/usage.md, "From code"): calls made close together go as one POST /api/batch,
// and each call cannot tell, but by its speed, that it was batched.

let app: FastifyInstance;
let base: string;
before(async () => {
  app = await buildApp({ sortMaxLength: 3 }, { logger: false });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
after(() => app.close());

/** A client of the test's service that records the path of every request it sends. */
function recording(options: Partial<ClientOptions> = {}): { client: Client; paths: string[] } {
  const paths: string[] = [];
  const client = createClient({
    baseUrl: base,
    fetch: (url, init) => {
      paths.push(new URL(url instanceof Request ? url.url : url).pathname);
      return fetch(url, init);
    },
    ...options,
  });
  return { client, paths };
}

/** What a call settled with, in a form two calls can be compared by. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await call };
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    const { name, message, type, title, status, detail, errors } = error;
    return { name, message, type, title, status, detail, errors };
  }
}

describe('createClient({ batch })', () => {
  test('calls made in the same turn go as one POST /api/batch; each resolves with its own answer', async () => {
    const { client, paths } = recording({ batch: {} });
    const answers = await Promise.all([
      client.isEven({ input: '9007199254740993' }),
      client.isOdd({ input: 7 }),
      client.sort({ input: [3, 'a', 1], order: 'desc' }),
      client.isNumber({ input: '0x1F' }),
      client.toString({ input: { b: 1, a: [true] } }),
      client.stringSplit({ input: { string: 'a,b', seperator: ',' } }),
    ]);
    assert.deepEqual(answers, [{ ret: false }, { ret: true }, { sortedArray: ['a', 3, 1] }, { ret: true }, { ret: '{"a":[true],"b":1}' }, { ret: ['a', 'b'] }]);
    assert.deepEqual(paths, ['/api/batch']);
  });

  test('a bad call rejects with the ProblemError its single endpoint answers: the same status, words and pointers', async () => {
    const { client: batched, paths } = recording({ batch: {} });
    const single = createClient({ baseUrl: base });
    const calls: Array<(client: Client) => Promise<unknown>> = [
      (c) => c.isEven({ input: 2.5 }),
      (c) => c.isOdd({ input: 'x' }),
      (c) => c.isEven({ input: '1'.repeat(20_000) }),
      (c) => c.sort({ input: [2, 1], order: 'up' as 'asc' }),
      (c) => c.sort({ input: [4, 3, 2, 1] }), // over SORT_MAX_LENGTH: 413
      (c) => c.sort({ input: [1], extra: true } as never),
      (c) => c.isNumber({} as never),
      (c) => c.stringSplit({ input: { string: 'a' } }),
      (c) => c.toString({ input: { a: 1 }, input2: 1 } as never),
      (c) => c.isEven({ input: 4 }),
    ];
    const together = await Promise.all(calls.map((call) => outcome(call(batched))));
    assert.deepEqual(paths, ['/api/batch']);
    for (const [i, call] of calls.entries()) assert.deepEqual(together[i], await outcome(call(single)), `call ${i}`);
    assert.deepEqual(together.at(-1), { value: { ret: true } });
    assert.equal((together[0] as { errors: Array<{ pointer: string }> }).errors[0]?.pointer, '/input');
  });

  test('maxOperations: a full batch goes at once, the rest in the next', async () => {
    const { client, paths } = recording({ batch: { maxOperations: 10 } });
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => client.isOdd({ input: i })));
    assert.deepEqual(
      answers.map((answer) => answer.ret),
      Array.from({ length: 25 }, (_, i) => i % 2 === 1),
    );
    assert.deepEqual(paths, ['/api/batch', '/api/batch', '/api/batch']);
  });

  test('maxDelayMs: calls over several turns join while the first waits; with 0 only one turn joins', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const waiting = recording({ batch: { maxDelayMs: 200 } });
    const first = waiting.client.isEven({ input: 1 });
    await sleep(20);
    const second = waiting.client.isEven({ input: 2 });
    assert.deepEqual(await Promise.all([first, second]), [{ ret: false }, { ret: true }]);
    assert.deepEqual(waiting.paths, ['/api/batch']);

    const eager = recording({ batch: {} });
    const one = eager.client.isEven({ input: 1 });
    await sleep(20);
    const two = eager.client.isEven({ input: 2 });
    await Promise.all([one, two]);
    // Each turn had one call, and a lone call goes to its own endpoint.
    assert.deepEqual(eager.paths, ['/api/isEven', '/api/isEven']);
  });

  test('what cannot join goes alone: path forms, legacy methods, large bodies; batch() and stream() are unchanged', async () => {
    const { client, paths } = recording({ batch: {} });
    const large = Array.from({ length: 3 }, () => 'x'.repeat(30_000));
    await Promise.all([
      client.isEvenByPath({ number: '4' }),
      client.legacyIsOdd({ number: 3 }),
      client.sort({ input: large }),
      client.batch([{ operation: 'isEven', input: 2 }]),
      client.isOdd({ input: 1 }),
    ]);
    assert.deepEqual(paths.sort(), ['/api/batch', '/api/isEven/4', '/api/isOdd', '/api/sort', '/is-odd']);
  });

  // A body of `{"input":"…"}` is the string's length and 12; in a batch, `{"operation":"toString",` adds 23.
  const ofBody = (chars: number) => ({ input: 'x'.repeat(chars - 12) });

  test('a body of 64 KiB joins a batch; one character more goes alone', async () => {
    const joins = recording({ batch: {} });
    await Promise.all([joins.client.toString(ofBody(64 * 1024)), joins.client.isEven({ input: 2 })]);
    assert.deepEqual(joins.paths, ['/api/batch']);
    const alone = recording({ batch: {} });
    await Promise.all([alone.client.toString(ofBody(64 * 1024 + 1)), alone.client.isEven({ input: 2 })]);
    assert.deepEqual(alone.paths.sort(), ['/api/isEven', '/api/toString']);
  });

  test('a batch goes once its items reach 1 MiB, whatever their count', async () => {
    // Sixteen items of 65,536 characters are 1 MiB: the batch goes, and the seventeenth call goes alone.
    const full = recording({ batch: {} });
    await Promise.all(Array.from({ length: 17 }, () => full.client.toString(ofBody(65_536 - 23))));
    assert.deepEqual(full.paths, ['/api/batch', '/api/toString']);
    // One character less each: sixteen stay under 1 MiB, and all seventeen go together.
    const under = recording({ batch: {} });
    await Promise.all(Array.from({ length: 17 }, () => under.client.toString(ofBody(65_535 - 23))));
    assert.deepEqual(under.paths, ['/api/batch']);
  });

  test('a batch refused as a whole with a 4xx (413: too large for the service) sends each call alone', async () => {
    const paths: string[] = [];
    const client = createClient({
      baseUrl: base,
      batch: {},
      fetch: async (url, init) => {
        const path = new URL(url instanceof Request ? url.url : url).pathname;
        paths.push(path);
        if (path === '/api/batch') return new Response('{"status":413,"title":"Content Too Large","detail":"too large"}', { status: 413 });
        return fetch(url, init);
      },
    });
    assert.deepEqual(await Promise.all([client.isEven({ input: 2 }), client.isOdd({ input: 2 })]), [{ ret: true }, { ret: false }]);
    assert.deepEqual(paths.sort(), ['/api/batch', '/api/isEven', '/api/isOdd']);
  });

  test('a batch answered 503 rejects every call with that ProblemError, as each single call would have been', async () => {
    const client = createClient({
      baseUrl: 'http://unused.invalid',
      batch: {},
      fetch: async () =>
        new Response('{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"busy"}', { status: 503, headers: { 'retry-after': '1' } }),
    });
    const outcomes = await Promise.all([outcome(client.isEven({ input: 2 })), outcome(client.sort({ input: [1] }))]);
    for (const each of outcomes)
      assert.deepEqual(each, {
        name: 'ProblemError',
        message: 'busy',
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        detail: 'busy',
        errors: [],
      });
  });

  test('an unreachable service: each call a ClientError naming its own single endpoint', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, batch: {} });
    const [even, sorted] = await Promise.allSettled([client.isEven({ input: 2 }), client.sort({ input: [1] })]);
    for (const [settled, path] of [
      [even, 'isEven'],
      [sorted, 'sort'],
    ] as const) {
      assert.equal(settled.status, 'rejected');
      const error: unknown = settled.status === 'rejected' ? settled.reason : undefined;
      assert.ok(error instanceof ClientError, String(error));
      assert.equal(error.url, `http://127.0.0.1:${port}/api/${path}`);
      assert.equal(
        error.message,
        `Cannot reach POST http://127.0.0.1:${port}/api/${path}: connect ECONNREFUSED 127.0.0.1:${port} (the service was not reached)`,
      );
    }
  });

  test('timeoutMs and signal hold per call: one call gives up without the others', async (t) => {
    const silent = await silentServer(t);
    const client = createClient({ baseUrl: silent, batch: {}, timeoutMs: 2_000 });
    const controller = new AbortController();
    const started = Date.now();
    const quick = client.isEven({ input: 2 }, { timeoutMs: 100 });
    const aborted = client.isOdd({ input: 2 }, { signal: controller.signal });
    const patient = client.isNumber({ input: '1' }, { timeoutMs: 400 });
    setTimeout(() => controller.abort(new Error('the caller gave up')), 200);
    await assert.rejects(
      quick,
      (error: unknown) =>
        error instanceof ClientError && error.message === `No answer from POST ${silent}/api/isEven within 100 ms (no answer from the service arrived)`,
    );
    const quickAt = Date.now() - started;
    await assert.rejects(aborted, /^Error: the caller gave up$/);
    await assert.rejects(
      patient,
      (error: unknown) =>
        error instanceof ClientError && error.message === `No answer from POST ${silent}/api/isNumber within 400 ms (no answer from the service arrived)`,
    );
    const patientAt = Date.now() - started;
    assert.ok(quickAt >= 90 && quickAt < 350, `${quickAt} ms`);
    assert.ok(patientAt >= 390 && patientAt < 1_500, `${patientAt} ms`);
    // A call whose signal is already aborted never joins.
    await assert.rejects(client.isEven({ input: 1 }, { signal: AbortSignal.abort(new Error('before')) }), /^Error: before$/);
  });

  test('bad batch options are refused, naming the option', () => {
    assert.throws(() => createClient({ baseUrl: base, batch: { maxOperations: 0 } }), /^TypeError: batch\.maxOperations must be an integer from 1, not 0$/);
    for (const maxDelayMs of [-1, 2 ** 31, Number.NaN])
      assert.throws(
        () => createClient({ baseUrl: base, batch: { maxDelayMs } }),
        new TypeError(`batch.maxDelayMs must be a number of milliseconds from 0 to 2147483647, not ${maxDelayMs}`),
      );
    // The edge itself is taken: setTimeout holds 2^31 - 1 ms.
    assert.doesNotThrow(() => createClient({ baseUrl: base, batch: { maxDelayMs: 2 ** 31 - 1 } }));
  });
});
