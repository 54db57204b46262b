import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_CONFIG } from '../../src/config.js';
import { buildApp } from '../../src/app.js';
import { CLIENT_ERROR_CLOSE_MS } from '../../src/http/problem-responses.js';
import { assertOk, assertProblem, build, post } from './helper.js';

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

/** The JSON body of a raw HTTP answer. */
const bodyOf = (response: string): unknown => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

/** The OpenAPI document's example of a status, for the GET operation these tests send to: what the service answers must be it. */
async function documentedExample(app: FastifyInstance, status: number): Promise<unknown> {
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
    paths: Record<string, { get: { responses: Record<string, { content: Record<string, { example: unknown }> }> } }>;
  }>();
  return document.paths['/api/isEven/{number}']?.get.responses[String(status)]?.content['application/problem+json']?.example;
}

describe('limits (docs/behaviour.md §3), each at its edge', () => {
  test("a path value longer than the router takes is 414 naming NUMBER_TEXT_LIMIT; one at the router's edge gets the number limit's 400", async (t) => {
    const app = await build(t, { numberTextLimit: 100 });
    const routerLimit = 3 * 100 + 64; // a percent-encoded character takes three
    assertProblem(
      await app.inject({ method: 'GET', url: `/api/isEven/${'1'.repeat(routerLimit + 1)}` }),
      414,
      'A path segment is longer than this service accepts: numbers are limited to 100 characters (NUMBER_TEXT_LIMIT)',
    );
    assertProblem(await app.inject({ method: 'GET', url: `/api/isEven/${'1'.repeat(routerLimit)}` }), 400, /limited to 100 characters \(NUMBER_TEXT_LIMIT\)$/);
  });

  describe('BODY_LIMIT', () => {
    test('defaults to 16 MiB', () => assert.equal(DEFAULT_CONFIG.bodyLimit, 16 * 1024 * 1024));
    const body = (length: number) => `{"input":"${'x'.repeat(length - 12)}"}`;
    test('a body of exactly the limit passes', async (t) => {
      const app = await build(t, { bodyLimit: 1000 });
      assert.equal(body(1000).length, 1000);
      assertOk(await post(app, '/api/isNumber', body(1000)), { ret: false });
    });
    test('one byte over the limit is 413', async (t) => {
      const app = await build(t, { bodyLimit: 1000 });
      assertProblem(await post(app, '/api/isNumber', body(1001)), 413, 'The request body is larger than the limit of 1000 bytes (BODY_LIMIT)');
    });
    test('a body over the default limit is 413', async (t) => {
      const app = await build(t);
      const response = await post(app, '/api/isNumber', body(16 * 1024 * 1024 + 1));
      assertProblem(response, 413, 'The request body is larger than the limit of 16777216 bytes (BODY_LIMIT)');
    });
  });

  describe('BODY_LIMIT, on the wire: refused before the body is read', () => {
    async function answerTo(head: string, bodyStart: string): Promise<string> {
      const app = await buildApp({ bodyLimit: 1000 }, { logger: false });
      try {
        await app.listen({ port: 0, host: '127.0.0.1' });
        const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1');
        socket.on('error', () => {});
        // The request is never finished: only an early answer can arrive.
        socket.write(`POST /api/isNumber HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${head}\r\n${bodyStart}`);
        return await new Promise<string>((resolve) => {
          let received = '';
          socket.on('data', (chunk) => {
            received += chunk.toString('utf8');
            if (received.includes('}')) resolve(received);
          });
          setTimeout(() => resolve(received), 3000);
        }).finally(() => socket.destroy());
      } finally {
        await app.close();
      }
    }
    test('Content-Length one byte over the limit: 413 at once, nothing of the body sent', async () => {
      const answer = await answerTo('Content-Length: 1001\r\n', '');
      assert.match(answer, /^HTTP\/1\.1 413 Content Too Large\r\n/);
      assert.match(answer, /"detail":"The request body is larger than the limit of 1000 bytes \(BODY_LIMIT\)"/);
    });
    test('chunked: 413 as soon as the chunks pass the limit, while the client is still sending', async () => {
      const chunk = `{"input":"${'x'.repeat(1000)}`;
      const answer = await answerTo('Transfer-Encoding: chunked\r\n', `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      assert.match(answer, /^HTTP\/1\.1 413 Content Too Large\r\n/);
      assert.match(answer, /application\/problem\+json/);
    });
  });

  describe('SORT_MAX_LENGTH', () => {
    test('defaults to 1,000,000: exactly that many elements sort', async (t) => {
      const app = await build(t);
      const input = Array.from({ length: 1_000_000 }, (_, i) => (i * 7) % 10);
      const response = await post(app, '/api/sort', { input });
      assert.equal(response.statusCode, 200);
      const { sortedArray } = response.json<{ sortedArray: number[] }>();
      assert.equal(sortedArray.length, 1_000_000);
      assert.equal(sortedArray[0], 0);
      assert.equal(sortedArray.at(-1), 9);
    });
    test('1,000,001 elements is 413', async (t) => {
      const app = await build(t);
      const input = new Array<number>(1_000_001).fill(1);
      assertProblem(await post(app, '/api/sort', { input }), 413, '/input has 1000001 elements; the limit is 1000000 (SORT_MAX_LENGTH)', ['/input']);
    });
    test('a configured limit of 3: 3 pass, 4 is 413', async (t) => {
      const app = await build(t, { sortMaxLength: 3 });
      assertOk(await post(app, '/api/sort', { input: [3, 2, 1] }), { sortedArray: [1, 2, 3] });
      assertProblem(await post(app, '/api/sort', { input: [4, 3, 2, 1] }), 413, '/input has 4 elements; the limit is 3 (SORT_MAX_LENGTH)', ['/input']);
    });
  });

  describe('STRING_SPLIT_MAX_PARTS', () => {
    test('defaults to 1,000,000: a string of exactly that many characters splits by ""; one more is 413', async (t) => {
      const app = await build(t);
      const response = await post(app, '/api/stringSplit', { input: { string: 'x'.repeat(1_000_000), seperator: '' } });
      assert.equal(response.statusCode, 200);
      assert.equal(response.json<{ ret: string[] }>().ret.length, 1_000_000);
      const detail = '/input/string splits into more than 1000000 parts; the limit is 1000000 (STRING_SPLIT_MAX_PARTS)';
      assertProblem(await post(app, '/api/stringSplit', { input: { string: 'x'.repeat(1_000_001), seperator: '' } }), 413, detail, ['/input/string']);
    });
    test('a configured limit of 3: 3 parts pass, 4 is 413, by a separator or into characters', async (t) => {
      const app = await build(t, { stringSplitMaxParts: 3 });
      assertOk(await post(app, '/api/stringSplit', { input: { string: 'a,b,c', seperator: ',' } }), { ret: ['a', 'b', 'c'] });
      assertOk(await post(app, '/api/stringSplit', { input: { string: '👍🏽é!', seperator: '' } }), { ret: ['👍🏽', 'é', '!'] });
      const detail = '/input/string splits into more than 3 parts; the limit is 3 (STRING_SPLIT_MAX_PARTS)';
      assertProblem(await post(app, '/api/stringSplit', { input: { string: 'a,b,c,', seperator: ',' } }), 413, detail, ['/input/string']);
      assertProblem(await post(app, '/api/stringSplit', { input: { string: 'abcd', seperator: '' } }), 413, detail, ['/input/string']);
    });
  });

  describe('MAX_DEPTH', () => {
    test('defaults to 128: input nested 128 deep passes on every route', async (t) => {
      const app = await build(t);
      const input = nested(128);
      assertOk(await post(app, '/api/isNumber', `{"input":${input}}`), { ret: false });
      assertOk(await post(app, '/api/toString', `{"input":${input}}`), { ret: input });
      assertOk(await post(app, '/api/sort', `{"input":[${input}, []]}`.replace(nested(128), nested(127))), { sortedArray: [[], JSON.parse(nested(127))] });
    });
    test('129 deep is 413 naming /input', async (t) => {
      const app = await build(t);
      assertProblem(await post(app, '/api/isNumber', `{"input":${nested(129)}}`), 413, '/input nests deeper than the limit of 128 levels (MAX_DEPTH)', [
        '/input',
      ]);
      assertProblem(await post(app, '/api/sort', `{"input":[${nested(128)}]}`), 413, '/input nests deeper than the limit of 128 levels (MAX_DEPTH)', [
        '/input',
      ]);
    });
    test('objects count as arrays do, and brackets inside strings do not count', async (t) => {
      const app = await build(t, { maxDepth: 2 });
      assertOk(await post(app, '/api/toString', '{"input":{"a":{"b":"[[[[{{{{"}}}'), { ret: '{"a":{"b":"[[[[{{{{"}}' });
      assertOk(await post(app, '/api/toString', '{"input":{"a":"é\\\\","b":"\\"[[["}}'), { ret: '{"a":"é\\\\","b":"\\"[[["}' });
      assertProblem(await post(app, '/api/toString', '{"input":{"a":{"b":{}}}}'), 413, '/input nests deeper than the limit of 2 levels (MAX_DEPTH)', [
        '/input',
      ]);
    });
    test('a deep member other than input is refused and named', async (t) => {
      const app = await build(t, { maxDepth: 2 });
      assertProblem(await post(app, '/api/isOdd', '{"input":3,"ex\\"tra/":[[[1]]]}'), 413, '/ex"tra~1 nests deeper than the limit of 2 levels (MAX_DEPTH)', [
        '/ex"tra~1',
      ]);
      assertProblem(await post(app, '/api/isOdd', '{"input":3,"clé ✓":[[[1]]]}'), 413, '/clé ✓ nests deeper than the limit of 2 levels (MAX_DEPTH)', [
        '/clé ✓',
      ]);
    });
    test('100,000 levels are refused at once, without building them', async (t) => {
      const app = await build(t);
      await app.memory.pool.warm(); // the body goes to the worker threads, which `npm start` starts before it listens
      const started = performance.now();
      assertProblem(await post(app, '/api/sort', `{"input":${nested(100_000)}}`), 413, '/input nests deeper than the limit of 128 levels (MAX_DEPTH)', [
        '/input',
      ]);
      assert.ok(performance.now() - started < 500);
    });
  });

  describe('NUMBER_TEXT_LIMIT', () => {
    const digits = (length: number) => '2'.repeat(length);
    const tooLong = (length: number) => `is ${length} characters long; numbers are limited to 10000 characters (NUMBER_TEXT_LIMIT)`;
    test('defaults to 10,000: a 10,000-digit number is answered, as JSON number, string and path', async (t) => {
      const app = await build(t);
      assertOk(await post(app, '/api/isEven', `{"input":${digits(10_000)}}`), { ret: true });
      assertOk(await post(app, '/api/isOdd', { input: digits(10_000) }), { ret: false });
      assertOk(await app.inject({ method: 'GET', url: `/api/isEven/${digits(10_000)}` }), { ret: true });
    });
    test('10,001 characters is 400', async (t) => {
      const app = await build(t);
      assertProblem(await post(app, '/api/isEven', `{"input":${digits(10_001)}}`), 400, `/input ${tooLong(10_001)}`, ['/input']);
      assertProblem(await post(app, '/api/isOdd', { input: digits(10_001) }), 400, `/input ${tooLong(10_001)}`, ['/input']);
      assertProblem(await app.inject({ method: 'GET', url: `/api/isOdd/${digits(10_001)}` }), 400, `The path value ${tooLong(10_001)}`);
    });
    test('a path value percent-encoded to three times the limit still gets a 400, not a 404 or 431', async (t) => {
      const app = await build(t);
      const encoded = '%32'.repeat(10_001);
      assertProblem(await app.inject({ method: 'GET', url: `/api/isEven/${encoded}` }), 400, `The path value ${tooLong(10_001)}`);
    });
    test('isNumber is not bound by it: a 20,000-digit path value is a number', async (t) => {
      const app = await build(t);
      assertOk(await app.inject({ method: 'GET', url: `/api/isNumber/${digits(20_000)}` }), { ret: true });
    });
  });

  describe('headers', () => {
    test('oversized headers get 431 problem+json', async (t) => {
      const app = await buildApp({}, { logger: false });
      t.after(() => app.close());
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      const socket = connect(port, '127.0.0.1');
      socket.write(`GET /api/isEven/2 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(200_000)}\r\n\r\n`);
      const response = await new Promise<string>((resolve) => {
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
        socket.on('close', () => resolve(received));
        socket.on('error', () => resolve(received));
      });
      assert.match(response, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\nContent-Type: application\/problem\+json; charset=utf-8\r\n/);
      assert.match(response, /"status":431/);
      assert.match(
        response,
        /"detail":"The request headers are larger than this service accepts: 16 KiB, and room for a path value as long as NUMBER_TEXT_LIMIT allows"/,
      );
      assert.deepEqual(bodyOf(response), await documentedExample(app, 431));
    });

    test('after a client error the answer is read whole, and a client that keeps its side open is closed after CLIENT_ERROR_CLOSE_MS', async (t) => {
      const app = await buildApp({}, { logger: false });
      t.after(() => app.close());
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      const connections = () => new Promise<number>((resolve) => app.server.getConnections((_error, count) => resolve(count)));
      // allowHalfOpen: the client does not end its side when the service ends its own.
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      t.after(() => socket.destroy());
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      socket.on('error', () => undefined);
      socket.write('NOT-HTTP\r\n\r\n');
      await once(socket, 'end'); // the service ended its side after the answer
      assert.match(received, /^HTTP\/1\.1 400 Bad Request\r\n[^]*\r\n\r\n\{"type":"about:blank",[^]*\}$/);
      await sleep(CLIENT_ERROR_CLOSE_MS / 2);
      assert.equal(await connections(), 1, 'still open while the client may read');
      await sleep(CLIENT_ERROR_CLOSE_MS / 2 + 500);
      assert.equal(await connections(), 0, 'closed by the service');
    });
  });

  describe('timeouts', () => {
    test('the configured values reach the HTTP server', async (t) => {
      const app = await build(t, { headersTimeoutMs: 1234, requestTimeoutMs: 5678, keepAliveTimeoutMs: 9012 });
      assert.equal(app.server.headersTimeout, 1234);
      assert.equal(app.server.requestTimeout, 5678);
      assert.equal(app.server.keepAliveTimeout, 9012);
    });
    test('a client stalling mid-headers is cut off while another is served', async (t) => {
      const app = await buildApp({ headersTimeoutMs: 300, requestTimeoutMs: 600 }, { logger: false });
      t.after(() => app.close());
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as { port: number };
      const stalled = connect(port, '127.0.0.1');
      stalled.write('GET /api/isEven/2 HTTP/1.1\r\nHost: x\r\n');
      const started = Date.now();
      const answer = new Promise<string>((resolve) => {
        let received = '';
        stalled.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
        stalled.on('close', () => resolve(received));
      });
      const served = await fetch(`http://127.0.0.1:${port}/api/isEven/2`);
      assert.ok(Date.now() - started < 250, 'the other client is served while the first one stalls');
      const response = await answer;
      const waited = Date.now() - started;
      assert.match(response, /^HTTP\/1\.1 408 Request Timeout\r\nContent-Type: application\/problem\+json; charset=utf-8\r\n/);
      assert.match(response, /"status":408/);
      assert.ok(waited >= 250 && waited < 3000, `${waited} ms`);
      assert.deepEqual(bodyOf(response), await documentedExample(app, 408));
      assert.deepEqual(await served.json(), { ret: true });
    });
  });
});
