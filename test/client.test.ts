import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { before, after, describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ClientError, ProblemError, createClient, type Client } from '../packages/client/src/index.js';
import { buildApp } from '../src/app.js';
import { silentServer } from './silent-server.js';

describe('createClient against the running service', () => {
  let app: FastifyInstance;
  let client: Client;
  before(async () => {
    app = await buildApp({}, { logger: false });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    client = createClient({ baseUrl: `${base}/`, headers: { 'x-request-id': 'client-test' } });
  });
  after(() => app.close());

  test('one method per operation of the OpenAPI document, legacy included (their types: test/client.types.ts)', async () => {
    const document = (await app.inject('/api/openapi.json')).json<{ paths: Record<string, Record<string, { operationId: string }>> }>();
    const operationIds = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    assert.deepEqual(Object.keys(client).sort(), operationIds.sort());
  });

  test('gzipBodiesFrom: bodies of at least that many bytes go gzip-coded, smaller ones as they are; coded answers are read', async () => {
    const seen: Array<{ encoding: string | undefined; answered: string | null }> = [];
    const watching: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      seen.push({ encoding: (init?.headers as Record<string, string>)['content-encoding'], answered: response.headers.get('content-encoding') });
      return response;
    };
    const coding = createClient({ baseUrl: app.listeningOrigin, fetch: watching, gzipBodiesFrom: 1000 });
    const input = Array.from({ length: 2000 }, (_, i) => 2000 - i);
    assert.deepEqual(await coding.sort({ input }), { sortedArray: input.toSorted((a, b) => a - b) });
    assert.deepEqual(await coding.isEven({ input: 4 }), { ret: true });
    assert.deepEqual(await coding.batch([{ operation: 'sort', input }]), [{ status: 200, result: { sortedArray: input.toSorted((a, b) => a - b) } }]);
    assert.deepEqual(seen, [
      { encoding: 'gzip', answered: 'gzip' },
      { encoding: undefined, answered: null },
      { encoding: 'gzip', answered: 'gzip' },
    ]);
  });

  test('every operation answers through its method', async () => {
    assert.deepEqual(await client.sort({ input: [3, 'a', 1, null], order: 'desc' }), { sortedArray: ['a', 3, 1, null] });
    assert.deepEqual(await client.isEven({ input: '9007199254740993' }), { ret: false });
    assert.deepEqual(await client.isOdd({ input: 7 }), { ret: true });
    assert.deepEqual(await client.isEvenByPath({ number: '123456789012345678901234567890' }), { ret: true });
    assert.deepEqual(await client.isOddByPath({ number: ' 7 ' }), { ret: true });
    assert.deepEqual(await client.isNumber({ input: '0x1F' }), { ret: true });
    assert.deepEqual(await client.isNumberByPath({ number: '12px/3' }), { ret: false });
    assert.deepEqual(await client.toString({ input: { b: 1, a: [true] } }), { ret: '{"a":[true],"b":1}' });
    assert.deepEqual(await client.stringSplit({ input: { string: 'a,b', seperator: ',' } }), { ret: ['a', 'b'] });
    assert.deepEqual(await client.legacySort({ array: [2, 1] }), { sortedArray: [1, 2] });
    assert.deepEqual(await client.legacyIsOdd({ number: 9 }), { number: 9, isOdd: true });
    assert.deepEqual(await client.legacyIsEven({ number: '10' }), { number: '10', isEven: true });
    assert.deepEqual(await client.legacyToString({ number: [1.0, 'x'] }), { ret: '[1,"x"]' });
  });

  test('batch(): the answers in order, each typed by its operation; a bad one in its place', async () => {
    const [even, sorted, bad] = await client.batch([
      { operation: 'isEven', input: '9007199254740993' },
      { operation: 'sort', input: [2, 1], order: 'desc' },
      { operation: 'isOdd', input: 'x' },
    ]);
    assert.deepEqual(even, { status: 200, result: { ret: false } });
    assert.deepEqual('result' in sorted ? sorted.result.sortedArray : undefined, [2, 1]);
    assert.equal(bad.status, 400);
    assert.equal('problem' in bad ? bad.problem.errors?.[0]?.pointer : undefined, '/operations/2/input');
    await assert.rejects(client.batch(Array.from({ length: 10_001 }, () => ({ operation: 'isEven' as const, input: 1 }))), (error: unknown) => {
      assert.ok(error instanceof ProblemError);
      assert.equal(error.status, 413);
      return true;
    });
  });

  test('stream(): operations from an async iterable in, each answer out as it comes', async () => {
    async function* numbers() {
      for (let i = 0; i < 5_000; i++) yield { operation: 'isOdd' as const, input: i };
      yield { operation: 'isOdd' as const, input: 'x' };
    }
    const answers = [];
    for await (const answer of client.stream(numbers())) answers.push(answer);
    assert.equal(answers.length, 5_001);
    for (const [i, answer] of answers.slice(0, -1).entries()) assert.deepEqual(answer, { status: 200, result: { ret: i % 2 === 1 } });
    assert.equal(answers.at(-1)?.status, 400);
  });

  test('an error answer rejects with a typed ProblemError', async () => {
    const rejection = await client.isEven({ input: 2.5 }).then(
      () => assert.fail('resolved'),
      (error: unknown) => error,
    );
    assert.ok(rejection instanceof ProblemError);
    assert.equal(rejection.status, 400);
    assert.equal(rejection.title, 'Bad Request');
    assert.equal(rejection.type, 'about:blank');
    assert.equal(rejection.detail, '/input must be an integer');
    assert.deepEqual(rejection.errors, [{ pointer: '/input', detail: '/input must be an integer' }]);
    await assert.rejects(
      client.isOddByPath({ number: 'abc' }),
      (error: unknown) => error instanceof ProblemError && error.status === 400 && error.errors.length === 0,
    );
  });

  test('a non-problem error answer still becomes a ProblemError', async () => {
    const fake = createClient({
      baseUrl: 'http://unused.invalid',
      fetch: async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }),
    });
    await assert.rejects(
      fake.isEvenByPath({ number: '2' }),
      (error: unknown) => error instanceof ProblemError && error.status === 502 && error.title === 'Bad Gateway',
    );
  });
});

describe('createClient when the service does not answer', () => {
  test('an unreachable server: a ClientError naming the method, the URL and the cause', async () => {
    // A port that was free a moment ago and is closed now.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}` });
    const error = await client.isEven({ input: 2 }).then(
      () => assert.fail('answered'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof ClientError, String(error));
    assert.equal(error.url, `http://127.0.0.1:${port}/api/isEven`);
    assert.equal(error.message, `Cannot reach POST http://127.0.0.1:${port}/api/isEven: connect ECONNREFUSED 127.0.0.1:${port} (the service was not reached)`);
    assert.equal(error.reached, false);
    assert.ok(error.cause instanceof Error);
  });

  test("a server that never answers: a ClientError after the call's timeout, or the client's", async (t) => {
    const base = await silentServer(t);
    const started = Date.now();
    await assert.rejects(createClient({ baseUrl: base }).isOddByPath({ number: '7' }, { timeoutMs: 300 }), (error: unknown) => {
      assert.ok(error instanceof ClientError);
      assert.equal(error.message, `No answer from GET ${base}/api/isOdd/7 within 300 ms (no answer from the service arrived)`);
      assert.equal(error.reached, false);
      return true;
    });
    assert.ok(Date.now() - started < 3_000);
    await assert.rejects(
      createClient({ baseUrl: base, timeoutMs: 200 }).sort({ input: [2, 1] }),
      /^ClientError: No answer from POST .*\/api\/sort within 200 ms \(no answer from the service arrived\)$/,
    );
  });

  test("a call aborted by its signal rejects with the signal's reason", async (t) => {
    const controller = new AbortController();
    const call = createClient({ baseUrl: await silentServer(t), timeoutMs: 10_000 }).isNumber({ input: '1' }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the caller gave up')), 100);
    await assert.rejects(call, /^Error: the caller gave up$/);
  });
});

/** A server that answers every request with these raw bytes, then does what `end` says to the connection. */
async function rawServer(t: TestContext, bytes: string, end: 'close' | 'destroy'): Promise<string> {
  const raw = createServer((socket) => {
    socket.once('data', () => {
      if (end === 'close') socket.end(bytes);
      else socket.write(bytes, () => socket.destroy());
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  t.after(() => raw.close());
  return `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
}

describe('every ClientError says whether the service was reached', () => {
  const JSON_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"ret":';

  test('an answer that begins, then its connection drops: reached, and the message says so', async (t) => {
    const base = await rawServer(t, JSON_HEAD, 'destroy');
    await assert.rejects(createClient({ baseUrl: base }).isEven({ input: 2 }), (error: unknown) => {
      assert.ok(error instanceof ClientError, String(error));
      assert.equal(error.reached, true);
      assert.match(error.message, new RegExp(`^The answer from POST ${base}/api/isEven broke off: .* \\(the service answered; the connection failed\\)$`));
      return true;
    });
  });

  test('an answer that begins, then stalls past the timeout: reached, and the message says so', async (t) => {
    const stalled = createServer((socket) => socket.once('data', () => socket.write(JSON_HEAD)));
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    t.after(() => stalled.close());
    const base = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
    await assert.rejects(createClient({ baseUrl: base, timeoutMs: 300 }).isEven({ input: 2 }), (error: unknown) => {
      assert.ok(error instanceof ClientError, String(error));
      assert.equal(error.reached, true);
      assert.equal(error.message, `No answer from POST ${base}/api/isEven within 300 ms (the service answered; the rest of its answer did not arrive in time)`);
      return true;
    });
  });

  test('a stream whose answers break off: reached', async (t) => {
    const base = await rawServer(t, NDJSON_HEAD + chunk(`${TWO_ANSWERS}{"status":200,"res`), 'destroy');
    await assert.rejects(
      (async () => {
        for await (const answer of createClient({ baseUrl: base }).stream([{ operation: 'isEven', input: 2 }])) void answer;
      })(),
      (error: unknown) => error instanceof ClientError && error.reached,
    );
  });
});

const NDJSON_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n';
const chunk = (text: string): string => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const TWO_ANSWERS = '{"status":200,"result":{"ret":true}}\n{"status":200,"result":{"ret":false}}\n';

describe('stream() when the answers break off', () => {
  test('the connection drops in the middle of a line: the whole answers, then a ClientError saying how many', async (t) => {
    const base = await rawServer(t, NDJSON_HEAD + chunk(`${TWO_ANSWERS}{"status":200,"res`), 'destroy');
    const answers: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const answer of createClient({ baseUrl: base }).stream([{ operation: 'isEven', input: 2 }])) answers.push(answer);
      })(),
      (error: unknown) => {
        assert.ok(error instanceof ClientError, String(error));
        assert.match(error.message, new RegExp(`^The answers from POST ${base}/api/stream broke off after 2 lines: `));
        return true;
      },
    );
    assert.deepEqual(answers, [
      { status: 200, result: { ret: true } },
      { status: 200, result: { ret: false } },
    ]);
  });

  test('the response ends cleanly but its last line is cut: a ClientError, not a SyntaxError', async (t) => {
    const base = await rawServer(t, NDJSON_HEAD + chunk(`${TWO_ANSWERS}{"status":200,"res`) + '0\r\n\r\n', 'close');
    let answered = 0;
    await assert.rejects(
      (async () => {
        for await (const answer of createClient({ baseUrl: base }).stream([{ operation: 'isEven', input: 2 }])) answered += answer.status === 200 ? 1 : 0;
      })(),
      (error: unknown) =>
        error instanceof ClientError && error.message === `The answers from POST ${base}/api/stream broke off after 2 lines: the next line is not JSON`,
    );
    assert.equal(answered, 2);
  });
});
