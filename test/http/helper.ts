import assert from 'node:assert/strict';
import { after, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Config } from '../../src/config.js';
import { buildApp } from '../../src/app.js';
import { conformanceTo } from './openapi-conformance.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

/** The app as production builds it (only logging off), closed when the test ends. */
export async function build(t: TestContext, overrides: Partial<Config> = {}): Promise<FastifyInstance> {
  const app = await buildApp(overrides, { logger: false });
  t.after(() => app.close());
  await app.ready();
  return app;
}

/**
 * One app with the default configuration, for the tests of the describe that calls this which only
 * send it requests: built at the first, closed after the last (building one takes about 50 ms).
 */
export function sharedApp(): () => Promise<FastifyInstance> {
  let built: Promise<FastifyInstance> | undefined;
  after(async () => (await built)?.close());
  return () =>
    (built ??= buildApp({}, { logger: false }).then(async (app) => {
      await app.ready();
      return checkedAgainstDocument(app);
    }));
}

/**
 * The app, with every answer its `inject` gives checked against the app's own OpenAPI document
 * (openapi-conformance.ts): status, content type, the service's headers and the body. The contract
 * cases that share an app (`sharedApp`) all pass through it.
 */
async function checkedAgainstDocument(app: FastifyInstance): Promise<FastifyInstance> {
  const document = await conformanceTo(app);
  const inject = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const response = await app.inject(options);
    const { method = 'GET', url = '/' } = typeof options === 'string' ? { url: options } : { method: options.method, url: options.url ?? options.path };
    const path = typeof url === 'string' ? url : `${url.pathname}`;
    document.check(String(method), path, {
      status: response.statusCode,
      contentType: response.headers['content-type'],
      headers: response.headers,
      body: response.body,
    });
    return response;
  };
  return new Proxy(app, { get: (target, key) => (key === 'inject' ? inject : (Reflect.get(target, key) as unknown)) });
}

/** POSTs `body` (a value, sent as JSON, or raw JSON text or bytes) to `url`. */
export function post(app: FastifyInstance, url: string, body: unknown, headers: InjectOptions['headers'] = {}): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}

export function assertOk(response: LightMyRequestResponse, body: unknown): void {
  assert.equal(response.headers['content-type'], JSON_TYPE, response.body);
  assert.deepEqual(response.json(), body);
  assert.equal(response.statusCode, 200);
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/**
 * Asserts a whole RFC 9457 problem: status, content type, type and title, and either the exact
 * detail or a pattern for it; with `pointers`, exactly these `errors[].pointer`s, in order.
 */
export function assertProblem(response: LightMyRequestResponse, status: number, detail: string | RegExp, pointers?: string[]): void {
  assert.equal(response.headers['content-type'], PROBLEM_TYPE, response.body);
  assert.equal(response.statusCode, status, response.body);
  const problem = response.json<{ type: string; title: string; status: number; detail: string; errors?: Array<{ pointer: string; detail: string }> }>();
  assert.equal(problem.type, 'about:blank');
  assert.equal(problem.title, TITLES[status]);
  assert.equal(problem.status, status);
  if (typeof detail === 'string') assert.equal(problem.detail, detail);
  else assert.match(problem.detail, detail);
  if (pointers === undefined) {
    assert.equal(problem.errors, undefined);
  } else {
    assert.deepEqual(
      problem.errors?.map((e) => e.pointer),
      pointers,
    );
    for (const error of problem.errors ?? []) assert.ok(error.detail.length > 0);
  }
  const allowed = new Set(['type', 'title', 'status', 'detail', 'errors']);
  for (const key of Object.keys(problem)) assert.ok(allowed.has(key), `unexpected problem member ${key}`);
}

/**
 * Keeps the event loop busy for `ms` in every turn, after the turn's I/O (a `setImmediate` chain),
 * until the function it returns is called: a loop past capacity, whose every ready event waits.
 */
export function busyEveryTurn(ms: number): () => void {
  let busy = true;
  const block = (): void => {
    if (!busy) return;
    const until = performance.now() + ms;
    while (performance.now() < until);
    setImmediate(block);
  };
  setImmediate(block);
  return () => void (busy = false);
}
