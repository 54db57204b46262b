import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { estimatePeakBytes } from '../../src/http/memory/estimates.js';
import { OPERATIONS } from '../../src/operations/index.js';
import { assertOk, assertProblem, post } from './helper.js';

const MIB = 1024 * 1024;

async function app(t: { after: (fn: () => Promise<unknown>) => void }, capacity: number, overrides = {}): Promise<FastifyInstance> {
  const built = await buildApp({ admissionWaitMs: 100, ...overrides }, { logger: false, memoryCapacity: capacity });
  t.after(() => built.close());
  await built.ready();
  return built;
}

const numbers = (count: number) => JSON.stringify({ input: Array.from({ length: count }, (_, i) => (i * 7919) % 1000) });

describe('admission by estimated peak memory (MEMORY_LIMIT)', () => {
  test('a body whose estimate is more than one request may ever have: 413 naming MEMORY_LIMIT, before it is read', async (t) => {
    const service = await app(t, 64 * MIB);
    const body = numbers(400_000);
    assert.ok(estimatePeakBytes(OPERATIONS.sort.memory, body.length, true) > service.memory.budget.ceiling(true));
    const response = await post(service, '/api/sort', body);
    assertProblem(
      response,
      413,
      /^Answering this \d+-byte body would take an estimated [\d.]+ MiB of memory; one request may have at most [\d.]+ MiB of the [\d.]+ \S+ memory limit \(MEMORY_LIMIT\)\. Send a smaller body$/,
    );
    assert.equal(service.memory.budget.reserved, 0);
    // Counted once, as a refusal of the budget's.
    const metrics = (await service.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^memory_budget_refusals_total\{status="413"\} 1$/m);
  });

  test('a body that does not fit now waits ADMISSION_WAIT_MS, then gets 503 with Retry-After; once there is room it is served', async (t) => {
    const service = await app(t, 64 * MIB);
    const held = service.memory.budget.reserve(64 * MIB, false, 0);
    assert.ok(!(held instanceof Promise));
    const started = Date.now();
    const refused = await post(service, '/api/isEven', { input: 4 });
    assert.ok(Date.now() - started >= 90, 'it waited');
    assertProblem(refused, 503, 'The service has no memory free for this request now (MEMORY_LIMIT); retry after the time in Retry-After');
    assert.equal(refused.headers['retry-after'], '1');
    const waiting = post(service, '/api/isEven', { input: 4 });
    setTimeout(() => held.release(), 30);
    assertOk(await waiting, { ret: true });
    const metrics = (await service.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(metrics, /^memory_budget_refusals_total\{status="503"\} 1$/m);
    assert.match(metrics, /^memory_budget_waits_total 2$/m);
    assert.match(metrics, /^memory_budget_reserved_bytes 0$/m);
    assert.match(metrics, /^memory_budget_capacity_bytes 67108864$/m);
  });

  test('a body operation sent with no body gives its reservation back whole, and the budget stays sound for the next request', async (t) => {
    const service = await app(t, 64 * MIB);
    for (const headers of [{}, { 'content-type': 'application/json' }, { 'content-length': '0' }]) {
      const response = await service.inject({ method: 'POST', url: '/api/isEven', headers });
      assert.ok(response.statusCode === 400 || response.statusCode === 415, `${JSON.stringify(headers)}: ${response.statusCode}`);
      assert.equal(service.memory.budget.reserved, 0, JSON.stringify(headers));
    }
    assertOk(await post(service, '/api/isEven', { input: 4 }), { ret: true });
  });

  test('probes and GET operations need no reservation: answered while the budget is full', async (t) => {
    const service = await app(t, 64 * MIB);
    const held = service.memory.budget.reserve(64 * MIB, false, 0);
    assert.ok(!(held instanceof Promise));
    assert.equal((await service.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assertOk(await service.inject({ method: 'GET', url: '/api/isOdd/3' }), { ret: true });
    held.release();
  });

  test('the reservation is held until the answer has been written: a reader that does not read keeps it', async (t) => {
    const service = await buildApp({}, { logger: false, memoryCapacity: 512 * MIB });
    t.after(() => service.close());
    await service.listen({ port: 0, host: '127.0.0.1' });
    const body = numbers(300_000);
    const socket = connect((service.server.address() as { port: number }).port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(`POST /api/sort HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    socket.pause(); // reads nothing: the answer (about 1.2 MB) stays queued in the service
    const expected = estimatePeakBytes(OPERATIONS.sort.memory, body.length, true);
    for (let i = 0; i < 100 && service.memory.budget.reserved !== expected; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(service.memory.budget.reserved, expected);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the answer is long written by the thread
    assert.equal(service.memory.budget.reserved, expected, 'still held while the answer waits for its reader');
    socket.destroy();
    for (let i = 0; i < 100 && service.memory.budget.reserved !== 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(service.memory.budget.reserved, 0);
  });

  test('a chunked body is admitted as if it were BODY_LIMIT (or as much as one request may have), then its reservation shrinks to its size', async (t) => {
    const service = await buildApp({ bodyLimit: 4 * MIB }, { logger: false, memoryCapacity: 64 * MIB });
    t.after(() => service.close());
    const reserved: number[] = [];
    service.addHook('preHandler', async (request) => void reserved.push(request.reservation?.bytes ?? -1));
    await service.listen({ port: 0, host: '127.0.0.1' });
    const { port } = service.server.address() as { port: number };
    const small = '{"input":[3,1,2]}';
    const socket = connect(port, '127.0.0.1');
    socket.write(
      `POST /api/sort HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${small.length.toString(16)}\r\n${small}\r\n0\r\n\r\n`,
    );
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        if (text.includes('}')) resolve(text);
      });
    }).finally(() => socket.destroy());
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answer, /\{"sortedArray":\[1,2,3\]\}$/);
    assert.deepEqual(reserved, [estimatePeakBytes(OPERATIONS.sort.memory, small.length, false)]);

    const large = numbers(400_000); // about 1.6 MB: its estimate passes what one request may have
    const response = await fetch(`http://127.0.0.1:${port}/api/sort`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({ start: (controller) => (controller.enqueue(new TextEncoder().encode(large)), controller.close()) }),
      duplex: 'half',
    });
    assert.equal(response.status, 413);
    assert.match(((await response.json()) as { detail: string }).detail, /\(MEMORY_LIMIT\)/);
    assert.equal(service.memory.budget.reserved, 0);
  });
});

describe('large bodies are answered in the worker threads exactly as on the event loop', () => {
  const bodies = fc.oneof(
    fc.record({
      path: fc.constant('/api/sort'),
      body: fc.record(
        {
          input: fc.array(
            fc.oneof(
              fc.integer(),
              fc.double({ noNaN: true, noDefaultInfinity: true }),
              fc.string(),
              fc.constant(null),
              fc.boolean(),
              fc.array(fc.integer(), { maxLength: 3 }),
              fc.dictionary(fc.string(), fc.integer(), { maxKeys: 3 }),
            ),
            { maxLength: 30 },
          ),
          order: fc.constantFrom('asc', 'desc', 'sideways', undefined),
        },
        { requiredKeys: ['input'] },
      ),
    }),
    fc.record({
      path: fc.constantFrom('/api/isEven', '/api/isOdd', '/api/isNumber'),
      body: fc.record({ input: fc.oneof(fc.integer(), fc.bigInt().map(String), fc.double().map(String), fc.string(), fc.constant(null)) }),
    }),
    fc.record({ path: fc.constantFrom('/is-even', '/is-odd'), body: fc.record({ number: fc.oneof(fc.integer(), fc.bigInt().map(String), fc.string()) }) }),
    fc.record({ path: fc.constantFrom('/api/toString', '/toString'), body: fc.jsonValue().map((value) => ({ input: value, number: value })) }),
    fc.record({
      path: fc.constant('/api/stringSplit'),
      body: fc.record({
        input: fc.record({ string: fc.oneof(fc.string(), fc.integer()), seperator: fc.constantFrom(',', '', 'a', undefined, 3) }, { requiredKeys: [] }),
      }),
    }),
    fc.record({ path: fc.constant('/sort'), body: fc.record({ array: fc.oneof(fc.array(fc.integer()), fc.string()) }) }),
  );

  test('same status, content type and body for random bodies, valid or not', async (t) => {
    const inline = await buildApp({}, { logger: false });
    const offloaded = await buildApp({ offloadBodyBytes: 0, stringSplitMaxParts: 5 }, { logger: false });
    const inlineLimited = await buildApp({ stringSplitMaxParts: 5 }, { logger: false });
    t.after(async () => Promise.all([inline.close(), offloaded.close(), inlineLimited.close()]));
    await fc.assert(
      fc.asyncProperty(bodies, async ({ path, body }) => {
        const text = JSON.stringify(body);
        const [a, b] = await Promise.all([post(inlineLimited, path, text), post(offloaded, path, text)]);
        assert.equal(b.statusCode, a.statusCode, `${path} ${text}: ${a.body} / ${b.body}`);
        assert.equal(b.headers['content-type'], a.headers['content-type']);
        assert.equal(b.body, a.body);
      }),
      { numRuns: 300 },
    );
    // Raw texts the parser refuses: not JSON, too deep, not UTF-8.
    for (const raw of ['{"input":', '[[[[', `{"input":${'['.repeat(200)}${']'.repeat(200)}}`, '{"input": 1e400}', '{"number": 9007199254740993}']) {
      for (const path of ['/api/isEven', '/api/toString', '/is-odd']) {
        const [a, b] = await Promise.all([post(inline, path, raw), post(offloaded, path, raw)]);
        assert.equal(b.statusCode, a.statusCode, `${path} ${raw}`);
        assert.equal(b.body, a.body);
      }
    }
    const notUtf8 = Buffer.from([0x7b, 0x22, 0x69, 0x22, 0x3a, 0xff, 0x7d]);
    const [a, b] = await Promise.all([post(inline, '/api/isNumber', notUtf8), post(offloaded, '/api/isNumber', notUtf8)]);
    assert.equal(b.body, a.body);
  });
});
