import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LightMyRequestResponse } from 'fastify';
import { build, busyEveryTurn, post } from './helper.js';
import { buildAdminApp } from '../../src/http/observability/probes.js';

// docs/operations.md, "Caches and CDNs": a GET operation's 200 may be kept by any cache for a year
// (RFC 9111, RFC 8246), with a strong ETag; everything else says no-store.
const FOREVER = 'public, max-age=31536000, immutable';

function assertCacheable(answer: LightMyRequestResponse, what: string): string {
  assert.equal(answer.headers['cache-control'], FOREVER, what);
  const tag = String(answer.headers.etag);
  assert.match(tag, /^"[!#-~]+"$/, `${what}: a strong entity tag (RFC 9110 §8.8.3)`);
  return tag;
}

test('a GET operation’s 200 may be kept by any cache for a year: Cache-Control public, immutable, and a strong ETag, the same for the same answer', async (t) => {
  const app = await build(t);
  const tags = new Map<string, string>();
  for (const url of ['/api/isEven/2', '/api/isEven/3', '/api/isOdd/9007199254740993', '/api/isNumber/0x1F', '/api/isNumber/abc']) {
    const answer = await app.inject({ method: 'GET', url });
    assert.equal(answer.statusCode, 200, url);
    const tag = assertCacheable(answer, url);
    assert.equal(assertCacheable(await app.inject({ method: 'GET', url }), url), tag, `${url}: the same tag again`);
    tags.set(answer.body, tag);
  }
  // A tag names the answer's bytes: two different answers never share one.
  assert.equal(new Set(tags.values()).size, tags.size);
  assert.equal(tags.size, 2, [...tags.keys()].join(' '));
});

test('If-None-Match naming the tag gets 304 with no body and the same Cache-Control and ETag; HEAD the same headers', async (t) => {
  const app = await build(t);
  const full = await app.inject({ method: 'GET', url: '/api/isOdd/7' });
  const tag = assertCacheable(full, 'the 200');
  // RFC 9110 §13.1.2: a list, a weak form of the tag and `*` all match; another tag does not.
  for (const ifNoneMatch of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
    for (const method of ['GET', 'HEAD'] as const) {
      const answer = await app.inject({ method, url: '/api/isOdd/9', headers: { 'if-none-match': ifNoneMatch } });
      assert.equal(answer.statusCode, 304, `${method} If-None-Match: ${ifNoneMatch}`);
      assert.equal(answer.body, '');
      assert.equal(assertCacheable(answer, `${method} 304`), tag);
    }
  }
  const other = await app.inject({ method: 'GET', url: '/api/isOdd/7', headers: { 'if-none-match': '"other"' } });
  assert.equal(other.statusCode, 200);
  assert.equal(other.body, full.body);
  // Cache-Control: no-cache asks caches to validate with the origin; this is the origin, and a match is
  // 304 whatever it says (RFC 9110 §13.1.2). fetch adds it to any request that sets If-None-Match itself.
  for (const cacheControl of ['no-cache', 'max-age=0']) {
    const answer = await app.inject({
      method: 'GET',
      url: '/api/isOdd/7',
      headers: { 'if-none-match': tag, 'cache-control': cacheControl, pragma: 'no-cache' },
    });
    assert.equal(answer.statusCode, 304, cacheControl);
  }
  const head = await app.inject({ method: 'HEAD', url: '/api/isOdd/7' });
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  assert.equal(assertCacheable(head, 'HEAD'), tag);
  // The other answer's tag is not this one's.
  assert.equal((await app.inject({ method: 'GET', url: '/api/isOdd/8', headers: { 'if-none-match': tag } })).statusCode, 200);
});

/** Asserts that `answer` has `status` and may be kept by no cache. */
function assertNoStore(answer: LightMyRequestResponse, status: number, what: string): void {
  assert.equal(answer.statusCode, status, `${what}: ${answer.body}`);
  assert.equal(answer.headers['cache-control'], 'no-store', what);
  assert.equal(answer.headers.etag, undefined, what);
}

test('what depends on settings, load or time says no-store: a limit’s 4xx, a bad path, 404, 405, probes and /metrics; POST answers carry no freshness', async (t) => {
  const app = await build(t, { numberTextLimit: 100 });
  assertNoStore(await app.inject({ method: 'GET', url: `/api/isEven/${'1'.repeat(365)}` }), 414, 'NUMBER_TEXT_LIMIT at the router');
  assertNoStore(await app.inject({ method: 'GET', url: `/api/isEven/${'1'.repeat(101)}` }), 400, 'NUMBER_TEXT_LIMIT');
  assertNoStore(await app.inject({ method: 'GET', url: '/api/isEven/abc' }), 400, 'not a number');
  assertNoStore(await app.inject({ method: 'GET', url: '/api/nothing' }), 404, 'no such path');
  assertNoStore(await app.inject({ method: 'PUT', url: '/api/isEven/2' }), 405, 'no such method');
  // A POST answer is kept by no cache without explicit freshness (RFC 9111 §2): it carries none.
  for (const answer of [await post(app, '/api/isEven', { input: 2 }), await post(app, '/is-even', { number: 2 })]) {
    assert.equal(answer.statusCode, 200);
    assert.deepEqual([answer.headers['cache-control'], answer.headers.etag, answer.headers.expires], [undefined, undefined, undefined]);
  }
  for (const url of ['/healthz', '/readyz', '/metrics']) assertNoStore(await app.inject({ method: 'GET', url }), 200, url);
  const admin = await buildAdminApp({ ready: () => true, metrics: app.metrics }, app.serviceLog);
  t.after(() => admin.close());
  for (const url of ['/healthz', '/readyz', '/metrics']) assertNoStore(await admin.inject({ method: 'GET', url }), 200, `ADMIN_PORT ${url}`);
});

test('429 (RATE_LIMIT_MAX) and 503 (shedding, MAX_EVENT_LOOP_DELAY_MS) on a GET operation say no-store', async (t) => {
  const limited = await build(t, { rateLimitMax: 1 });
  assert.equal((await limited.inject({ method: 'GET', url: '/api/isEven/2' })).statusCode, 200);
  assertNoStore(await limited.inject({ method: 'GET', url: '/api/isEven/2' }), 429, 'RATE_LIMIT_MAX');
  const shedding = await build(t, { maxEventLoopDelayMs: 20 });
  const stop = busyEveryTurn(60);
  t.after(stop);
  await sleep(200);
  const answer = await shedding.inject({ method: 'GET', url: '/api/isEven/2' });
  stop();
  assertNoStore(answer, 503, 'MAX_EVENT_LOOP_DELAY_MS');
});
