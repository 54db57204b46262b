import assert from 'node:assert/strict';
import { after, type TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Config } from '../../src/config.js';
import { buildApp } from '../../src/app.js';

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
      return app;
    }));
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
