import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { LOGGED_URL_MAX } from '../../src/http/observability/access-log.js';
import { DEFAULT_CONFIG, type Config } from '../../src/config.js';
import { buildApp } from '../../src/app.js';
import { buildAdminApp } from '../../src/http/observability/probes.js';
import { assertOk, assertProblem, build, busyEveryTurn, post } from './helper.js';

// A fresh id: this process's random prefix (12 base64url characters) and a counter in base 36.
const FRESH_ID = /^[\w-]{12}-[0-9a-z]+$/;

describe('probes', () => {
  test('GET /healthz is 200 while the process runs, shutting down or not', async (t) => {
    const app = await build(t);
    assertOk(await app.inject({ method: 'GET', url: '/healthz' }), { status: 'ok' });
    app.lifecycle.ready = false;
    assertOk(await app.inject({ method: 'GET', url: '/healthz' }), { status: 'ok' });
  });
  test('GET /readyz is 200 when ready and 503 problem+json from the moment shutdown begins', async (t) => {
    const app = await build(t);
    assertOk(await app.inject({ method: 'GET', url: '/readyz' }), { status: 'ready' });
    app.lifecycle.ready = false;
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(response.json<{ detail: string }>().detail, 'The service is shutting down and takes no new traffic');
  });
  test('from the moment shutdown begins, every response says Connection: close', async (t) => {
    const app = await build(t);
    assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).headers.connection, 'keep-alive');
    app.lifecycle.ready = false;
    assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).headers.connection, 'close');
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).headers.connection, 'close');
  });
  test('probes are not in the OpenAPI document, which describes the operations', async (t) => {
    const app = await build(t);
    const { paths } = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    for (const path of ['/healthz', '/readyz', '/metrics']) assert.equal(paths[path], undefined);
  });
});

describe('ADMIN_PORT: the probes and metrics on an app of their own', () => {
  test('the API app leaves them out; the admin app serves them from the same lifecycle and metrics, and nothing else', async (t) => {
    const app = await build(t, { adminPort: 0 });
    for (const url of ['/healthz', '/readyz', '/metrics']) assertProblem(await app.inject({ method: 'GET', url }), 404, /^There is no GET \//);
    const admin = await buildAdminApp({ ready: () => app.lifecycle.ready, metrics: app.metrics }, app.serviceLog);
    t.after(() => admin.close());
    assertOk(await admin.inject({ method: 'GET', url: '/healthz' }), { status: 'ok' });
    assertOk(await admin.inject({ method: 'GET', url: '/readyz' }), { status: 'ready' });
    await app.inject({ method: 'GET', url: '/api/isEven/2' });
    const metrics = await admin.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /^http_requests_total\{method="GET",route="\/api\/isEven\/:number",status="200"\} 1$/m);
    assertProblem(
      await admin.inject({ method: 'GET', url: '/api/isEven/2' }),
      404,
      'There is no GET /api/isEven/2 on the admin port; it serves /healthz, /readyz and /metrics',
    );
    app.lifecycle.stop();
    assertProblem(await admin.inject({ method: 'GET', url: '/readyz' }), 503, 'The service is shutting down and takes no new traffic');
  });
});

describe('GET /metrics', () => {
  test('is Prometheus text with requests and latency by method, route template and status', async (t) => {
    const app = await build(t);
    await app.inject({ method: 'GET', url: '/api/isEven/4' });
    await app.inject({ method: 'GET', url: '/api/isEven/5' });
    await post(app, '/api/isEven', { input: 2.5 });
    await app.inject({ method: 'GET', url: '/no/such/path/123' });
    await app.inject({ method: 'GET', url: '/no/such/path/456' });
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const text = response.body;
    assert.match(text, /^http_requests_total\{method="GET",route="\/api\/isEven\/:number",status="200"\} 2$/m);
    assert.match(text, /^http_requests_total\{method="POST",route="\/api\/isEven",status="400"\} 1$/m);
    // Unknown paths share one label value, so their number cannot grow the metric.
    assert.match(text, /^http_requests_total\{method="GET",route="unmatched",status="404"\} 2$/m);
    assert.doesNotMatch(text, /no\/such\/path/);
    assert.match(text, /^http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/isEven\/:number",status="200"\} \d+$/m);
    assert.match(text, /^http_request_duration_seconds_count\{method="GET",route="\/api\/isEven\/:number",status="200"\} 2$/m);
    for (const processMetric of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.match(text, new RegExp(`^${processMetric} `, 'm'), processMetric);
    }
    // Nothing reads this process's buffered stdout slowly here (test/buffered-stdout.test.ts drops lines).
    assert.match(text, /^log_lines_dropped_total 0$/m);
  });
});

describe('ACCESS_LOG: each mode writes exactly the lines it promises; a 5xx and a slow request always', () => {
  /** The access-log lines (status, level) for a fixed mix of answers under `accessLog`. */
  async function logged(
    t: { after: (fn: () => Promise<unknown>) => void },
    accessLog: Config['accessLog'],
    slowRequestMs = 60_000,
  ): Promise<Array<[number, number]>> {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
    const app = await buildApp({ accessLog, slowRequestMs }, { logger: { level: 'info', stream } });
    t.after(() => app.close());
    // A route that fails, and one that is slow, only for this test. (The slow one is far above the
    // threshold, which is far above an ordinary answer: a first request on a loaded machine took 20 ms.)
    app.get('/test/fail', async () => {
      throw new Error('boom');
    });
    app.get('/test/slow', async () => new Promise((resolve) => setTimeout(() => resolve({ slow: true }), 250)));
    for (let i = 0; i < 4; i++) assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/x' })).statusCode, 400);
    assert.equal((await app.inject({ method: 'GET', url: '/nope' })).statusCode, 404);
    assert.equal((await app.inject({ method: 'GET', url: '/test/fail' })).statusCode, 500);
    assert.equal((await app.inject({ method: 'GET', url: '/test/slow' })).statusCode, 200);
    return lines
      .map((line) => JSON.parse(line) as { msg: string; status: number; level: number; requestId: string; method: string; route: string; ms: number })
      .filter((entry) => entry.msg === 'request')
      .map((entry) => {
        // An unknown path has no route template (the metrics count it as `unmatched`).
        assert.ok(
          entry.requestId && entry.method === 'GET' && (entry.route !== undefined || entry.status === 404) && typeof entry.ms === 'number',
          JSON.stringify(entry),
        );
        return [entry.status, entry.level];
      });
  }
  test('the default is minimal: only the 5xx (level error)', async (t) => {
    assert.deepEqual(DEFAULT_CONFIG.accessLog, { mode: 'minimal' });
    assert.deepEqual(await logged(t, DEFAULT_CONFIG.accessLog), [[500, 50]]);
  });
  test('minimal with SLOW_REQUEST_MS=200: the 5xx and the slow request (level warn)', async (t) => {
    assert.deepEqual(await logged(t, { mode: 'minimal' }, 200), [
      [500, 50],
      [200, 40],
    ]);
  });
  test('errors: every 4xx and 5xx', async (t) => {
    assert.deepEqual(await logged(t, { mode: 'errors' }), [
      [400, 30],
      [404, 30],
      [500, 50],
    ]);
  });
  test('sample:2: one request in two, and the 5xx', async (t) => {
    assert.deepEqual(await logged(t, { mode: 'sample', every: 2 }), [
      [200, 30],
      [200, 30],
      [404, 30],
      [500, 50],
    ]);
  });
  test('all: every request, as before', async (t) => {
    assert.deepEqual(await logged(t, { mode: 'all' }, 200), [
      [200, 30],
      [200, 30],
      [200, 30],
      [200, 30],
      [400, 30],
      [404, 30],
      [500, 50],
      [200, 40],
    ]);
  });
  test("a drain's readiness 503 is an answer, not an error: no line under minimal, level info under errors, counted in /metrics", async (t) => {
    for (const [mode, expected] of [
      ['minimal', []],
      ['errors', [[503, 30]]],
    ] as const) {
      const lines: string[] = [];
      const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
      const app = await buildApp({ accessLog: { mode } }, { logger: { level: 'info', stream } });
      t.after(() => app.close());
      app.lifecycle.stop();
      for (let i = 0; i < 3; i++) assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
      const entries = lines.map((line) => JSON.parse(line) as { msg: string; status: number; level: number }).filter((entry) => entry.msg === 'request');
      assert.deepEqual(
        entries.map((entry) => [entry.status, entry.level]),
        expected.length === 0 ? [] : [...expected, ...expected, ...expected],
        mode,
      );
      assert.match((await app.inject({ method: 'GET', url: '/metrics' })).body, /^http_requests_total\{method="GET",route="\/readyz",status="503"\} 3$/m);
    }
  });
  test('x-request-id is echoed and the metrics count every request whatever the mode', async (t) => {
    const app = await buildApp({ accessLog: { mode: 'minimal' } }, { logger: false });
    t.after(() => app.close());
    for (let i = 0; i < 3; i++)
      assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2', headers: { 'x-request-id': `m-${i}` } })).headers['x-request-id'], `m-${i}`);
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    assert.match(text, /^http_requests_total\{method="GET",route="\/api\/isEven\/:number",status="200"\} 3$/m);
  });
});

describe('request ids and logs', () => {
  test('a request without x-request-id gets a new id, returned in the response, never the same twice', async (t) => {
    const app = await build(t);
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const id = String((await app.inject({ method: 'GET', url: i % 2 === 0 ? '/api/isOdd/3' : '/nope' })).headers['x-request-id']);
      assert.match(id, FRESH_ID);
      ids.add(id);
    }
    assert.equal(ids.size, 1000);
  });
  test('a sensible incoming x-request-id is honoured, errors included', async (t) => {
    const app = await build(t);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/api/isOdd/3', headers: { 'x-request-id': 'abc-123.def:4' } })).headers['x-request-id'],
      'abc-123.def:4',
    );
    assert.equal((await app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'trace-9' } })).headers['x-request-id'], 'trace-9');
  });
  test('an unsafe or oversized x-request-id is replaced', async (t) => {
    const app = await build(t);
    for (const bad of ['has space', 'x'.repeat(129), 'new\\nline', '']) {
      assert.match(String((await app.inject({ method: 'GET', url: '/api/isOdd/3', headers: { 'x-request-id': bad } })).headers['x-request-id']), FRESH_ID);
    }
  });
  test('ACCESS_LOG=all: one JSON log line per request, with its id, method, route, status and time', async (t) => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
    const app = await buildApp({ accessLog: { mode: 'all' } }, { logger: { level: 'info', stream } });
    t.after(() => app.close());
    await app.inject({ method: 'POST', url: '/api/isEven', headers: { 'content-type': 'application/json', 'x-request-id': 'req-42' }, payload: '{"input":2}' });
    await app.inject({ method: 'GET', url: '/api/isEven/x' });
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'request');
    assert.equal(entries.length, 2);
    assert.equal(lines.filter((line) => line.includes('incoming request')).length, 0);
    assert.deepEqual(
      { requestId: entries[0]?.requestId, method: entries[0]?.method, route: entries[0]?.route, status: entries[0]?.status, level: entries[0]?.level },
      { requestId: 'req-42', method: 'POST', route: '/api/isEven', status: 200, level: 30 },
    );
    assert.equal(typeof entries[0]?.ms, 'number');
    assert.equal(entries[1]?.status, 400);
  });
  test(`a URL longer than ${LOGGED_URL_MAX} characters is logged cut, with its length`, async (t) => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
    const app = await buildApp({ accessLog: { mode: 'all' } }, { logger: { level: 'info', stream } });
    t.after(() => app.close());
    const atLimit = `/api/isEven/${'4'.repeat(LOGGED_URL_MAX - '/api/isEven/'.length)}`;
    const overLimit = `${atLimit}2`;
    for (const url of [atLimit, overLimit]) assert.equal((await app.inject({ method: 'GET', url })).statusCode, 200);
    const urls = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'request')
      .map((entry) => entry.url);
    assert.deepEqual(urls, [atLimit, `${atLimit}…(${LOGGED_URL_MAX + 1} characters)`]);
  });
  test("a line logged through a request's logger carries its request id", async (t) => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
    const app = await buildApp({}, { logger: { level: 'info', stream } });
    t.after(() => app.close());
    app.get('/logs-a-warning', async (request) => (request.log.warn('something to look at'), { ok: true }));
    const response = await app.inject({ method: 'GET', url: '/logs-a-warning', headers: { 'x-request-id': 'trace-42' } });
    assert.equal(response.headers['x-request-id'], 'trace-42');
    const warning = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.msg === 'something to look at');
    assert.equal(warning?.requestId, 'trace-42');
  });
});

describe('edge protection', () => {
  test('security headers by default, with a CSP under which the docs page loads only its own files', async (t) => {
    const app = await build(t);
    const response = await app.inject({ method: 'GET', url: '/api/docs' });
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    assert.equal(
      response.headers['content-security-policy'],
      "default-src 'self';script-src 'self';style-src 'self' 'unsafe-inline';img-src 'self' data:;connect-src 'self';font-src 'self';object-src 'none';base-uri 'none';form-action 'self';frame-ancestors 'none'",
    );
    assert.doesNotMatch(response.body, /<script>(?!\s*<\/script>)/, 'no inline script the CSP would block');
  });
  test('JSON responses carry the API set: nosniff and a CSP that allows nothing; not the page headers', async (t) => {
    const app = await build(t);
    for (const response of [
      await app.inject({ method: 'GET', url: '/api/isEven/2' }),
      await app.inject({ method: 'GET', url: '/nope' }),
      await post(app, '/api/sort', { input: 1 }),
    ]) {
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.equal(response.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
      assert.equal(response.headers['x-frame-options'], undefined);
    }
  });
  test('SECURITY_HEADERS=off sends none of them', async (t) => {
    const app = await build(t, { securityHeaders: 'off' });
    const response = await app.inject({ method: 'GET', url: '/api/isEven/2' });
    assert.equal(response.headers['content-security-policy'], undefined);
    assert.equal(response.headers['x-content-type-options'], undefined);
  });
  test('no rate limit by default', async (t) => {
    const app = await build(t);
    for (let i = 0; i < 20; i++) assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).statusCode, 200);
  });
  test('RATE_LIMIT_MAX: past the limit, 429 problem+json with Retry-After; probes are never limited', async (t) => {
    const app = await build(t, { rateLimitMax: 2, rateLimitWindowMs: 60_000 });
    assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).statusCode, 200);
    const limited = await app.inject({ method: 'GET', url: '/api/isEven/2' });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(limited.headers['retry-after'], '60');
    assert.deepEqual(limited.json(), {
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'Too many requests: the limit is 2 per 1 minute (RATE_LIMIT_MAX); retry after the time in Retry-After',
    });
    for (const probe of ['/healthz', '/readyz', '/metrics']) assert.equal((await app.inject({ method: 'GET', url: probe })).statusCode, 200, probe);
    // @fastify/rate-limit's hook comes after the route's own (src/http/protocol/route-config.ts): a
    // 429 carries the service's headers, Vary, and an earlier-revision route's own.
    const legacy = await app.inject({ method: 'POST', url: '/sort', headers: { 'content-type': 'application/json' }, payload: '{"array":[2,1]}' });
    assert.equal(legacy.statusCode, 429);
    assert.equal(legacy.headers.vary, 'accept-encoding');
    assert.match(String(legacy.headers.deprecation), /^@\d+$/);
    assert.equal(legacy.headers.link, '</api/sort>; rel="successor-version"');
    assert.equal(legacy.headers['x-content-type-options'], 'nosniff');
    assert.ok(legacy.headers['x-request-id']);
  });
  /** Blocks every turn of the event loop for `ms` until the function it returns is called: a sustained overload. */
  function blockEveryTurn(ms: number): () => void {
    const overload = setInterval(() => {
      const until = Date.now() + ms;
      while (Date.now() < until);
    }, 1);
    return () => clearInterval(overload);
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  test('MAX_EVENT_LOOP_DELAY_MS: an overloaded event loop sheds load with 503 and Retry-After, on purpose; probes still answer', async (t) => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
    const app = await buildApp({ accessLog: { mode: 'errors' }, maxEventLoopDelayMs: 20, overloadTargetMs: 'off' }, { logger: { level: 'info', stream } });
    t.after(() => app.close());
    const stop = blockEveryTurn(40);
    t.after(stop);
    await sleep(400);
    const shed = await app.inject({ method: 'GET', url: '/api/isEven/2' });
    const shedBody = await app.inject({ method: 'POST', url: '/api/sort', headers: { 'content-type': 'application/json' }, payload: '{"input":[2,1]}' });
    const probe = await app.inject({ method: 'GET', url: '/healthz' });
    stop();
    assertProblem(shed, 503, 'The service is overloaded (MAX_EVENT_LOOP_DELAY_MS); retry after the time in Retry-After');
    assert.equal(shed.headers['retry-after'], '5');
    assert.ok(shed.headers['x-request-id']);
    assertProblem(shedBody, 503, 'The service is overloaded (MAX_EVENT_LOOP_DELAY_MS); retry after the time in Retry-After');
    assert.equal(probe.statusCode, 200);
    // Logged as any answer (at info under ACCESS_LOG=errors), none at level error, and one line that says it sheds.
    const entries = lines.map((line) => JSON.parse(line) as { msg: string; status?: number; level: number; refused?: number; maxEventLoopDelayMs?: number });
    assert.deepEqual(
      entries.filter((entry) => entry.msg === 'request' && entry.status === 503).map((entry) => entry.level),
      [30, 30],
    );
    assert.equal(entries.filter((entry) => entry.level >= 50).length, 0, 'no line at level error');
    const shedding = entries.filter((entry) => entry.msg === 'shedding load: the event loop is late past MAX_EVENT_LOOP_DELAY_MS');
    assert.deepEqual(
      shedding.map(({ level, refused, maxEventLoopDelayMs }) => ({ level, refused, maxEventLoopDelayMs })),
      [{ level: 40, refused: 1, maxEventLoopDelayMs: 20 }],
    );
    await sleep(300);
    assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).statusCode, 200, 'served again once the load is gone');
  });

  // A body worth refusing (4 KiB or more, docs/operations.md "Past capacity"), answered on the event loop.
  const SORT_BODY = JSON.stringify({ input: Array.from({ length: 1000 }, (_, i) => (i * 7919) % 10_007) });
  const sortOf = (app: Awaited<ReturnType<typeof build>>, url = '/api/sort', field = 'input') =>
    app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: SORT_BODY.replace('input', field) });

  /** Sends the sort of `SORT_BODY` every 30 ms for `ms`, an open load (each inject is a connection of its own): the statuses. */
  async function askWhile(app: Awaited<ReturnType<typeof build>>, ms: number): Promise<number[]> {
    const statuses: Promise<number>[] = [];
    for (const until = performance.now() + ms; performance.now() < until; await sleep(30)) statuses.push(sortOf(app).then((answer) => answer.statusCode));
    return Promise.all(statuses);
  }

  test('OVERLOAD_TARGET_MS: a loop late past the target for an interval refuses new callers whose wait is past it, 503 with Retry-After; probes and docs still answer', async (t) => {
    const app = await build(t, { overloadTargetMs: 20 });
    const stop = busyEveryTurn(60);
    t.after(stop);
    // Late past the target, but not yet for 100 ms (CoDel's interval): a burst the queue may absorb.
    assert.equal((await sortOf(app)).statusCode, 200);
    const statuses = await askWhile(app, 300);
    assert.ok(statuses.includes(503), `refused once standing: ${statuses.join(', ')}`);
    const shed = await sortOf(app);
    const legacy = await sortOf(app, '/sort', 'array');
    // What refusing would save little of is answered: a GET, a body under 4 KiB.
    const byPath = await app.inject({ method: 'GET', url: '/api/isEven/2' });
    const others = await Promise.all(['/healthz', '/readyz', '/metrics', '/api/openapi.json'].map((url) => app.inject({ method: 'GET', url })));
    stop();
    assertProblem(
      shed,
      503,
      'The service is at capacity: this request would wait longer than it may to start (OVERLOAD_TARGET_MS); retry after the time in Retry-After',
    );
    assert.equal(shed.headers['retry-after'], '1');
    // The connection stays open, a body still arriving read and dropped: a refusal that closed it would send
    // a client that reconnects back as a new caller (docs/operations.md, "Past capacity", rule 4).
    assert.equal(shed.headers.connection, 'keep-alive');
    assert.equal(byPath.statusCode, 200);
    // What the OpenAPI document gives as its 503 example.
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { example: unknown }> }> }>>;
    }>();
    assert.deepEqual(shed.json(), document.paths['/api/sort']?.post?.responses['503']?.content['application/problem+json']?.example);
    // The service's own headers, as on every answer; answered by an app-wide hook, before the
    // route's own: no Vary (a problem is never coded), but an earlier-revision route's headers
    // all the same (sendProblem writes them).
    assert.ok(shed.headers['x-request-id']);
    assert.equal(shed.headers['x-content-type-options'], 'nosniff');
    assert.equal(shed.headers.vary, undefined);
    assert.equal(legacy.statusCode, 503);
    assert.match(String(legacy.headers.deprecation), /^@\d+$/);
    assert.equal(legacy.headers.link, '</api/sort>; rel="successor-version"');
    assert.deepEqual(
      others.map((answer) => answer.statusCode),
      [200, 200, 200, 200],
    );
    await sleep(150);
    assert.equal((await sortOf(app)).statusCode, 200, 'served again once the load is gone');
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const refusals = statuses.filter((status) => status === 503).length + 2;
    assert.match(metrics, new RegExp(`^overload_refusals_total\\{signal="loop"\\} ${refusals}$`, 'm'));
    assert.match(metrics, /^overload_refusals_total\{signal="pool"\} 0$/m);
    assert.match(metrics, /^overload_target_seconds 0\.02$/m);
    assert.match(metrics, /^overload_queue_delay_seconds \d/m);
  });

  test('a refusal past capacity is on purpose: no error line each, one warn line while refusing, counted in /metrics', async (t) => {
    for (const [mode, logged] of [
      ['minimal', false],
      ['errors', true],
    ] as const) {
      const lines: string[] = [];
      const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
      const app = await buildApp({ accessLog: { mode }, overloadTargetMs: 20 }, { logger: { level: 'info', stream } });
      t.after(() => app.close());
      const stop = busyEveryTurn(60);
      t.after(stop);
      const statuses = await askWhile(app, 900);
      stop();
      const refused = statuses.filter((status) => status === 503).length;
      assert.ok(refused >= 2, `${mode}: ${statuses.join(', ')}`);
      const entries = lines.map(
        (line) =>
          JSON.parse(line) as { msg: string; status?: number; level: number; refused?: number; refusedTotal?: number; targetMs?: number; signal?: string },
      );
      assert.deepEqual(
        entries.filter((entry) => entry.msg === 'request' && entry.status === 503).map((entry) => entry.level),
        logged ? Array<number>(refused).fill(30) : [],
        mode,
      );
      assert.equal(entries.filter((entry) => entry.level >= 50).length, 0, `${mode}: no line at level error`);
      const refusing = entries.filter((entry) => entry.msg === 'refusing requests past capacity');
      assert.deepEqual(
        refusing.map(({ level, refused, refusedTotal, targetMs, signal }) => ({ level, refused, refusedTotal, targetMs, signal })),
        [{ level: 40, refused: 1, refusedTotal: 1, targetMs: 20, signal: 'loop' }],
        `${mode}: one line for the first refusal, none for the next within 10 s`,
      );
      assert.match((await app.inject({ method: 'GET', url: '/metrics' })).body, new RegExp(`^overload_refusals_total\\{signal="loop"\\} ${refused}$`, 'm'));
    }
  });

  test('OVERLOAD_TARGET_MS=off: the same overload is queued, never refused', async (t) => {
    const app = await build(t, { overloadTargetMs: 'off' });
    const stop = busyEveryTurn(60);
    await sleep(300);
    const answer = await sortOf(app);
    stop();
    assert.equal(answer.statusCode, 200);
    assert.doesNotMatch((await app.inject({ method: 'GET', url: '/metrics' })).body, /overload_refusals_total/);
  });

  test('one long turn of the event loop (a start, a collection) is no overload: nothing is refused', async (t) => {
    const app = await build(t, { overloadTargetMs: 20 });
    await sleep(50);
    const until = Date.now() + 200;
    while (Date.now() < until);
    assert.equal((await sortOf(app)).statusCode, 200);
  });
});
