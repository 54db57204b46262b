import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Config } from '../../src/config.js';
import { buildApp } from '../../src/app.js';
import { conformanceTo } from './openapi-conformance.js';

// Every status the document lists is one the service answers, and every answer it gives for a
// request to an operation is in the document: status, content type and body schema
// (openapi-backend). The fuzzing test (fuzz.test.ts) checks its random requests the same way.

type Request = [method: 'GET' | 'POST' | 'PUT', url: string, body?: string, headers?: Record<string, string>];

async function answersConform(
  t: { after: (fn: () => Promise<unknown>) => void },
  overrides: Partial<Config>,
  requests: Array<[Request, number]>,
  capacity?: number,
  hold?: (app: FastifyInstance) => void,
): Promise<void> {
  const app = await buildApp({ admissionWaitMs: 20, ...overrides }, { logger: false, ...(capacity === undefined ? {} : { memoryCapacity: capacity }) });
  t.after(() => app.close());
  await app.ready();
  const document = await conformanceTo(app);
  hold?.(app);
  for (const [[method, url, body, headers], status] of requests) {
    const options: InjectOptions = { method, url, headers: { 'content-type': 'application/json', ...headers } };
    if (body !== undefined) options.payload = body;
    const response = await app.inject(options);
    assert.equal(response.statusCode, status, `${method} ${url}: ${response.body.slice(0, 200)}`);
    assert.ok(
      document.check(method, url, {
        status: response.statusCode,
        contentType: response.headers['content-type'],
        headers: response.headers,
        body: response.body,
      }),
      `${method} ${url} matched no operation`,
    );
  }
}

const BODY_PATHS = [
  '/api/sort',
  '/api/isEven',
  '/api/isOdd',
  '/api/isNumber',
  '/api/toString',
  '/api/stringSplit',
  '/sort',
  '/is-odd',
  '/is-even',
  '/toString',
];

describe('the OpenAPI document describes every answer', () => {
  test('every request example of every operation: 200 as documented', async (t) => {
    const app = await buildApp({}, { logger: false });
    t.after(() => app.close());
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> } }>>;
    }>();
    const requests: Array<[Request, number]> = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const example of Object.values(methods.post?.requestBody?.content['application/json']?.examples ?? {}))
        requests.push([['POST', path, JSON.stringify(example.value)], 200]);
    }
    for (const path of ['/api/isEven/12345', '/api/isOdd/-7', '/api/isNumber/0x1F']) requests.push([['GET', path], 200]);
    assert.ok(requests.length >= 25);
    await answersConform(t, {}, requests);
  });

  test('400, 405 (a path value left empty), 413, 414 and 415', async (t) => {
    await answersConform(t, { bodyLimit: 4096, sortMaxLength: 3, maxDepth: 2, stringSplitMaxParts: 2 }, [
      ...BODY_PATHS.map((path): [Request, number] => [['POST', path, '{"wrong":1}'], 400]),
      ...BODY_PATHS.map((path): [Request, number] => [['POST', path, '{"input":'], 400]),
      ...BODY_PATHS.map((path): [Request, number] => [['POST', path, `{"input":"${'x'.repeat(5000)}"}`], 413]),
      ...BODY_PATHS.map((path): [Request, number] => [['POST', path, '{"input":1}', { 'content-type': 'text/plain' }], 415]),
      [['POST', '/api/sort', '{"input":[4,3,2,1]}'], 413],
      [['POST', '/sort', '{"array":[4,3,2,1]}'], 413],
      [['POST', '/api/toString', '{"input":[[[1]]]}'], 413],
      [['POST', '/api/stringSplit', '{"input":{"string":"abc","seperator":""}}'], 413],
      [['POST', '/api/isEven', '{"input":2.5}'], 400],
      [['GET', '/api/isEven/2.5'], 400],
      [['GET', '/api/isEven/'], 405],
      [['GET', '/api/isOdd/'], 405],
      [['GET', '/api/isNumber/'], 405],
      [['GET', `/api/isEven/${'9'.repeat(40_000)}`], 414],
    ]);
  });

  test('413 naming MEMORY_LIMIT, and 503 with Retry-After when the budget is full', async (t) => {
    const big = JSON.stringify({ input: Array.from({ length: 400_000 }, (_, i) => i % 1000) });
    await answersConform(
      t,
      {},
      [
        [['POST', '/api/sort', big], 413],
        [['POST', '/api/toString', big], 413],
      ],
      64 * 2 ** 20,
    );
    await answersConform(
      t,
      {},
      BODY_PATHS.map((path): [Request, number] => [['POST', path, '{"input":1,"number":1,"array":[]}'], 503]),
      64 * 2 ** 20,
      (app) => {
        const held = app.memory.budget.reserve(64 * 2 ** 20, false, 0);
        assert.ok(!(held instanceof Promise));
      },
    );
  });

  test('429 with Retry-After past RATE_LIMIT_MAX, on body and path operations', async (t) => {
    // The document itself is the first request of this client's window.
    await answersConform(t, { rateLimitMax: 2 }, [
      [['GET', '/api/isEven/2'], 200],
      [['GET', '/api/isEven/2'], 429],
      [['POST', '/api/isOdd', '{"input":1}'], 429],
      [['POST', '/is-odd', '{"number":1}'], 429],
    ]);
  });
});
