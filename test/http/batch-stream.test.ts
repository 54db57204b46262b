import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import { assertProblem, build, post } from './helper.js';

const NDJSON = 'application/x-ndjson';

async function listening(t: TestContext, overrides: Partial<Config> = {}): Promise<{ app: FastifyInstance; port: number }> {
  const app = await build(t, overrides);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as { port: number }).port };
}

/** A stream request over a real socket: the request to write lines to, and the response when its head arrives. */
function openStream(port: number): { send: ReturnType<typeof request>; response: Promise<IncomingMessage> } {
  const send = request({ port, host: '127.0.0.1', method: 'POST', path: '/api/stream', headers: { 'content-type': NDJSON } });
  const response = new Promise<IncomingMessage>((resolve, reject) => send.on('response', resolve).on('error', reject));
  return { send, response };
}

/** Reads answer lines from a response as they arrive (node:readline, as the CLI reads its input). */
function lineReader(response: IncomingMessage): { next(): Promise<Record<string, unknown>>; all(): Promise<Array<Record<string, unknown>>> } {
  const lines = createInterface({ input: response, crlfDelay: Infinity })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const line = await lines.next();
    if (line.done === true) throw new Error('the stream ended');
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  const all = async () => {
    const answers: Array<Record<string, unknown>> = [];
    for (let line = await lines.next(); line.done !== true; line = await lines.next()) answers.push(JSON.parse(line.value) as Record<string, unknown>);
    return answers;
  };
  return { next, all };
}

describe('POST /api/batch', () => {
  test('answers in order; a bad operation gets its problem in its place and never fails the others', async (t) => {
    const app = await build(t);
    const response = await post(app, '/api/batch', {
      operations: [
        { operation: 'isEven', input: 4 },
        { operation: 'isPrime', input: 3 },
        { operation: 'isOdd', inptu: 3 },
        7,
        { operation: 'sort', input: [2, 1] },
      ],
    });
    assert.equal(response.statusCode, 200);
    const { answers } = response.json<{
      answers: Array<{ status: number; result?: unknown; problem?: { detail: string; errors: Array<{ pointer: string }> } }>;
    }>();
    assert.deepEqual(answers[0], { status: 200, result: { ret: true } });
    assert.equal(answers[1]?.status, 400);
    assert.deepEqual(answers[1]?.problem?.errors[0]?.pointer, '/operations/1/operation');
    assert.match(answers[1]?.problem?.detail ?? '', /"isPrime" is not an operation/);
    assert.equal(answers[2]?.problem?.errors[0]?.pointer, '/operations/2/input');
    assert.match(answers[2]?.problem?.detail ?? '', /the body has "inptu", which is not one of its fields/);
    assert.equal(answers[3]?.problem?.errors[0]?.pointer, '/operations/3');
    assert.deepEqual(answers[4], { status: 200, result: { sortedArray: [1, 2] } });
  });

  test('a batch that is itself wrong is a 400 problem', async (t) => {
    const app = await build(t);
    assertProblem(await post(app, '/api/batch', '{"operations":[{"operation":"isEven","input":4}'), 400, /^The request body is not valid JSON/);
    assertProblem(await post(app, '/api/batch', { ops: [] }), 400, '/operations is required; the body has "ops", which is not one of its fields', [
      '/operations',
    ]);
    assertProblem(await post(app, '/api/batch', { operations: {} }), 400, '/operations must be an array of operations', ['/operations']);
    assertProblem(await post(app, '/api/batch', ''), 400, /^The request body is empty/, ['']);
  });

  test('BATCH_MAX_OPERATIONS is enforced at its edge with a 413 naming it', async (t) => {
    const app = await build(t, { batchMaxOperations: 3 });
    const item = { operation: 'isOdd', input: 1 };
    assert.equal((await post(app, '/api/batch', { operations: [item, item, item] })).statusCode, 200);
    assertProblem(
      await post(app, '/api/batch', { operations: [item, item, item, item] }),
      413,
      '/operations has 4 operations; the limit is 3 (BATCH_MAX_OPERATIONS). Send them in several batches',
      ['/operations'],
    );
  });

  test('a batch over OFFLOAD_BODY_BYTES is answered in the worker threads, the same as on the event loop', async (t) => {
    const app = await build(t, { offloadBodyBytes: 1024 });
    const operations = Array.from({ length: 200 }, (_, i) =>
      i % 3 === 0 ? { operation: 'isEven', input: String(i) } : { operation: 'isOdd', input: i % 7 === 0 ? 'x' : i },
    );
    const large = await post(app, '/api/batch', { operations });
    const small = await build(t);
    assert.equal(large.statusCode, 200);
    assert.deepEqual(large.json(), (await post(small, '/api/batch', { operations })).json());
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /operations_total\{operation="isEven",status="200"\} 67/);
    assert.match(metrics, /operations_total\{operation="isOdd",status="400"\} 19/);
  });

  test('a batch of one million operations gets a 413 over a real socket', async (t) => {
    const { port } = await listening(t);
    const body = `{"operations":[${Array.from({ length: 1_000_000 }, () => '{}').join(',')}]}`;
    const response = await fetch(`http://127.0.0.1:${port}/api/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(response.status, 413);
    assert.match(await response.text(), /has 1000000 operations; the limit is 10000 \(BATCH_MAX_OPERATIONS\)/);
  });
});

describe('POST /api/stream', () => {
  test('answers each line as soon as it arrives, before the next is sent', async (t) => {
    const { port } = await listening(t);
    const { send, response } = openStream(port);
    send.write('{"operation":"isEven","input":"9007199254740993"}\n');
    const answers = lineReader(await response);
    assert.deepEqual(await answers.next(), { status: 200, result: { ret: false } });
    send.write('not json\n{"operation":"isOdd","input":9007199254740993}\n');
    assert.match(String((((await answers.next()).problem ?? {}) as { detail?: string }).detail), /^The line is not valid JSON/);
    assert.deepEqual(await answers.next(), { status: 200, result: { ret: true } });
    send.end('{"operation":"isEv'); // truncated: the last line, without its line break
    const last = await answers.next();
    assert.equal(last.status, 400);
    assert.match(String((last.problem as { detail: string }).detail), /^The line is not valid JSON/);
  });

  test('a line over STREAM_MAX_LINE_BYTES gets its 413 line before it has all arrived, and 100 MiB of it later the stream goes on', async (t) => {
    const { app, port } = await listening(t);
    const { send, response } = openStream(port);
    send.write('{"operation":"toString","input":"');
    const mib = Buffer.alloc(1024 * 1024, 'x');
    send.write(mib);
    const answers = lineReader(await response);
    const refused = await answers.next(); // while 99 MiB of the line are still to come
    assert.equal(refused.status, 413);
    assert.match(JSON.stringify(refused), /longer than the limit of 65536 bytes \(STREAM_MAX_LINE_BYTES\); it was skipped unread/);
    for (let i = 1; i < 100; i++) if (!send.write(mib)) await new Promise((resolve) => send.once('drain', resolve));
    send.end('"}\n{"operation":"isEven","input":2}\n');
    assert.deepEqual(await answers.all(), [{ status: 200, result: { ret: true } }]);
    assert.equal(app.memory.budget.reserved, 0);
  });

  test(
    'a client that stops reading makes the service stop reading; when it stays silent the connection closes and the reservation is freed',
    { timeout: 30_000 },
    async (t) => {
      const { app, port } = await listening(t, { streamIdleTimeoutMs: 1_000 });
      const socket = connect(port, '127.0.0.1');
      t.after(() => socket.destroy());
      socket.on('error', () => undefined); // the service resets it, with unread answers
      socket.pause(); // never reads
      socket.write(`POST /api/stream HTTP/1.1\r\nHost: x\r\nContent-Type: ${NDJSON}\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const line = '{"operation":"sort","input":[3,2,1,"a","b",null,true,[1],{"k":1}]}\n'.repeat(1000);
      const chunk = `${Buffer.byteLength(line).toString(16)}\r\n${line}\r\n`;
      let written = 0;
      // Write until the kernel's buffers are full both ways: the service has stopped reading.
      for (let i = 0; i < 2000 && !socket.destroyed; i++) {
        if (!socket.write(chunk)) {
          const drained = await Promise.race([
            new Promise((resolve) => socket.once('drain', () => resolve(true))),
            new Promise((resolve) => setTimeout(() => resolve(false), 300)),
          ]);
          if (drained === false) break;
        }
        written += chunk.length;
      }
      assert.ok(written < 2000 * chunk.length, 'the service kept reading although nobody read its answers');
      assert.ok(app.memory.budget.reserved > 0, 'the stream holds its reservation');
      // STREAM_IDLE_TIMEOUT_MS, then the connection closes. Seen from the service: a client that reads
      // nothing may never see the close itself (a FIN waits behind the answers it does not read).
      const deadline = Date.now() + 10_000;
      while (app.memory.budget.reserved > 0 || (await new Promise<number>((resolve) => app.server.getConnections((_e, n) => resolve(n)))) > 0) {
        assert.ok(Date.now() < deadline, 'the stream still holds its connection or its reservation');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  );

  test('a client that disconnects mid-stream frees its reservation, and the service goes on', async (t) => {
    const { app, port } = await listening(t);
    const { send, response } = openStream(port);
    send.on('error', () => undefined);
    send.write('{"operation":"isOdd","input":1}\n');
    const answers = lineReader(await response);
    assert.deepEqual(await answers.next(), { status: 200, result: { ret: true } });
    (await response).on('error', () => undefined);
    send.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(app.memory.budget.reserved, 0);
    const again = await fetch(`http://127.0.0.1:${port}/api/stream`, {
      method: 'POST',
      headers: { 'content-type': NDJSON },
      body: '{"operation":"isOdd","input":2}\n',
    });
    assert.equal(await again.text(), '{"status":200,"result":{"ret":false}}\n');
  });

  test('a stream silent for STREAM_IDLE_TIMEOUT_MS ends with a 408 line; one past STREAM_TIMEOUT_MS too, and REQUEST_TIMEOUT_MS does not apply', async (t) => {
    const { port } = await listening(t, { streamIdleTimeoutMs: 600, streamTimeoutMs: 2_500, requestTimeoutMs: 1_000, headersTimeoutMs: 1_000 });
    const idle = openStream(port);
    idle.send.write('{"operation":"isOdd","input":1}\n');
    const idleAnswers = await lineReader(await idle.response).all();
    assert.equal(idleAnswers.length, 2);
    assert.equal(idleAnswers[1]?.status, 408);
    assert.match(JSON.stringify(idleAnswers[1]), /sent nothing for 600 ms \(STREAM_IDLE_TIMEOUT_MS\)/);

    const long = openStream(port);
    long.send.on('error', () => undefined);
    const ticker = setInterval(() => long.send.write('{"operation":"isEven","input":2}\n'), 100);
    t.after(() => clearInterval(ticker));
    const longAnswers = await lineReader(await long.response).all();
    clearInterval(ticker);
    const last = longAnswers.at(-1);
    assert.ok(longAnswers.length > 15, `${longAnswers.length} answers: the stream outlived REQUEST_TIMEOUT_MS`);
    assert.equal(last?.status, 408);
    assert.match(JSON.stringify(last), /ran for its longest time of 2500 ms \(STREAM_TIMEOUT_MS\)/);
    for (const answer of longAnswers.slice(0, -1)) assert.deepEqual(answer, { status: 200, result: { ret: true } });
  });

  test('takes only NDJSON, and is counted in /metrics by operation and status', async (t) => {
    const app = await build(t);
    assertProblem(
      await post(app, '/api/stream', '{"operation":"isOdd","input":1}'),
      415,
      'The stream must be NDJSON, one JSON object per line, sent with Content-Type: application/x-ndjson',
    );
    const response = await app.inject({
      method: 'POST',
      url: '/api/stream',
      headers: { 'content-type': NDJSON },
      payload: '{"operation":"isOdd","input":1}\n\n{"operation":"isOdd","input":"y"}\n',
    });
    assert.equal(response.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    assert.equal(response.body.split('\n').length, 4);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /operations_total\{operation="isOdd",status="200"\} 1/);
    assert.match(metrics, /operations_total\{operation="isOdd",status="400"\} 1/);
    assert.match(metrics, /operations_total\{operation="unknown",status="400"\} 1/);
  });
});
