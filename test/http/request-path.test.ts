import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { memoryAdmission } from '../../src/http/memory/memory-admission.js';
import { MemoryBudget } from '../../src/http/memory/budget.js';
import { answerCoding } from '../../src/http/protocol/answer-coding.js';
import { contentCoding } from '../../src/http/protocol/content-coding.js';
import { routeConfig, routeConfigOf } from '../../src/http/protocol/route-config.js';
import { connections } from '../../src/http/protocol/connections.js';
import { accessLog } from '../../src/http/observability/access-log.js';
import { createHttpMetrics } from '../../src/http/observability/metrics.js';
import { DEFAULT_CONFIG } from '../../src/config.js';

const MIB = 1024 * 1024;
const admissionOptions = {
  budget: new MemoryBudget(64 * MIB, 8 * MIB),
  memoryLimit: 512 * MIB,
  bodyLimit: MIB,
  offloadBodyBytes: 64 * 1024,
  admissionWaitMs: 100,
};

test('a step of the request path registered before one it needs: the app refuses to start, naming it', async () => {
  const app = Fastify();
  await app.register(routeConfig);
  await app.register(answerCoding, { minBytes: 1024 });
  void app.register(memoryAdmission, admissionOptions);
  await assert.rejects(async () => app.ready(), /'connections' of plugin 'memory-admission'/);
  const decodingFirst = Fastify();
  void decodingFirst.register(contentCoding, { bodyLimit: MIB });
  await assert.rejects(async () => decodingFirst.ready(), /'memory-admission' of plugin 'content-coding'/);
  const codingFirst = Fastify();
  void codingFirst.register(answerCoding, { minBytes: 1024 });
  await assert.rejects(async () => codingFirst.ready(), /'route-config' of plugin 'answer-coding'/);
});

test('a step that reads a request decoration nobody made: the app refuses to start, naming it', async () => {
  // access-log reads the operation tally that buildApp decorates (src/app.ts) for the routes to fill.
  const app = Fastify();
  app.decorate('serviceLog', app.log);
  await app.register(connections, { ...DEFAULT_CONFIG });
  await app.register(routeConfig);
  void app.register(accessLog, { metrics: createHttpMetrics(), policy: { mode: 'minimal' }, slowRequestMs: 1000 });
  await assert.rejects(async () => app.ready(), /operationTally/);
  const decorated = Fastify();
  decorated.decorate('serviceLog', decorated.log);
  await decorated.register(connections, { ...DEFAULT_CONFIG });
  await decorated.register(routeConfig);
  decorated.decorateRequest('operationTally', undefined);
  await decorated.register(accessLog, { metrics: createHttpMetrics(), policy: { mode: 'minimal' }, slowRequestMs: 1000 });
  await decorated.ready();
  await decorated.close();
});

test('an admitted POST over a socket has one close listener, which releases its reservation', async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  const listeners: number[] = [];
  app.addHook('onSend', (_request, reply, payload, done) => {
    listeners.push(reply.raw.listenerCount('close'));
    done(null, payload);
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const response = await fetch(`${address}/api/sort`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":[2,1]}' });
  assert.deepEqual(await response.json(), { sortedArray: [1, 2] });
  assert.deepEqual(listeners, [1]);
  // The reservation is released once the answer has been written.
  for (let i = 0; i < 50 && app.memory.budget.reserved > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(app.memory.budget.reserved, 0);
});

test("a route's config is read from Fastify once a request, and is the route's own object", async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  const seen: Array<{ url: string | undefined; config: unknown }> = [];
  app.addHook('onSend', (request, _reply, payload, done) => {
    // Fastify's getter builds a new object at each read; the config inside is the route's own.
    const config = routeConfigOf(request);
    assert.equal(config, request.routeOptions.config);
    assert.equal(routeConfigOf(request), config);
    seen.push({ url: config.url, config });
    done(null, payload);
  });
  await app.inject({ method: 'POST', url: '/api/isEven', payload: { input: 2 } });
  await app.inject({ method: 'POST', url: '/api/isEven', payload: { input: 3 } });
  await app.inject({ method: 'GET', url: '/api/isOdd/3' });
  await app.inject({ method: 'GET', url: '/nowhere' });
  assert.deepEqual(
    seen.map(({ url }) => url),
    ['/api/isEven', '/api/isEven', '/api/isOdd/:number', undefined],
  );
  assert.equal(seen[0]?.config, seen[1]?.config);
});

type Step = 'onRequest' | 'preParsing' | 'preValidation';
const STEPS: readonly Step[] = ['onRequest', 'preParsing', 'preValidation'];

/**
 * The hooks Fastify runs for a route, step by step, by their functions' names: from its documented
 * `printRoutes({ includeHooks: true })`, a tree in which each node is its parent's path and more.
 */
function hooksOf(app: FastifyInstance, method: string, path: string): Record<Step, string[]> {
  const lines = app.printRoutes({ includeHooks: true, commonPrefix: false, method }).split('\n');
  const parents: string[] = [];
  for (const [i, line] of lines.entries()) {
    const node = /^([│├└─ ]*)([^│├└─ •].*) \(([A-Z, -]+)\)$/.exec(line);
    if (node === null) continue;
    const depth = (node[1] as string).length / 4 - 1;
    parents.length = depth;
    const full = `${parents.at(-1) ?? ''}${node[2]}`;
    parents.push(full);
    if (full !== path || !(node[3] ?? '').split(', ').includes(method)) continue;
    const hooks = { onRequest: [], preParsing: [], preValidation: [] } as Record<Step, string[]>;
    for (const hookLine of lines.slice(i + 1)) {
      const hook = /• \((\w+)\) (\[.*\])$/.exec(hookLine);
      if (hook === null) break;
      if (STEPS.includes(hook[1] as Step)) hooks[hook[1] as Step] = (JSON.parse(hook[2] as string) as string[]).map((name) => name.replace('()', ''));
    }
    return hooks;
  }
  throw new Error(`${method} ${path} is no route`);
}

// Every request's, in app.ts's order; then a route's own, in its options; then what libraries add
// to a route as it is added (@fastify/compress's `onRequest` where answers may be coded, @fastify/rate-limit's).
const APP_WIDE = ['requestLogger', 'serviceHeaders', 'overloadControl'];
const BODY_HOOKS = { preParsing: ['reserveMemory', 'decode'], preValidation: ['shrinkToBody'] };

test('the hooks of a request, step by step: app-wide, then the body context, then the route', async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  await app.ready();
  assert.deepEqual(hooksOf(app, 'POST', '/api/sort'), { onRequest: [...APP_WIDE, 'varyOnAcceptEncoding', 'onRequest'], ...BODY_HOOKS });
  // An answer never coded (a parity): no Vary, nothing of @fastify/compress.
  assert.deepEqual(hooksOf(app, 'POST', '/api/isEven'), { onRequest: APP_WIDE, ...BODY_HOOKS });
  assert.deepEqual(hooksOf(app, 'GET', '/api/isEven/:number'), { onRequest: APP_WIDE, preParsing: [], preValidation: [] });
  // A probe's no-store (protocol/caching.ts).
  assert.deepEqual(hooksOf(app, 'GET', '/healthz'), { onRequest: [...APP_WIDE, 'routeHeaders'], preParsing: [], preValidation: [] });
  // The earlier revision's headers first among the route's own: its errors carry them.
  assert.deepEqual(hooksOf(app, 'POST', '/sort'), { onRequest: [...APP_WIDE, 'routeHeaders', 'varyOnAcceptEncoding', 'onRequest'], ...BODY_HOOKS });
  // A 405 answers in its own hook, after the path's headers; in the scope of the preflights, where @fastify/cors runs first.
  assert.deepEqual(hooksOf(app, 'PUT', '/sort'), {
    onRequest: [...APP_WIDE, 'handleCors', 'routeHeaders', 'refuse', 'onRequest'],
    preParsing: [],
    preValidation: [],
  });
  // The stream's reservation is fixed: the shrinking hook lets it be.
  assert.deepEqual(hooksOf(app, 'POST', '/api/stream'), { onRequest: [...APP_WIDE, 'varyOnAcceptEncoding', 'onRequest'], ...BODY_HOOKS });

  // A rate limit's hook comes last, so that a 429 carries the route's headers; tracing's first of all.
  const limited = await buildApp({ rateLimitMax: 1 }, { logger: false });
  t.after(() => limited.close());
  await limited.ready();
  assert.deepEqual(hooksOf(limited, 'POST', '/sort').onRequest, [...APP_WIDE, 'routeHeaders', 'varyOnAcceptEncoding', 'onRequest', 'anonymous']);
});

test('a 404 runs the app-wide onRequest hooks alone: no body hook reads, reserves or decodes its body', async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  const response = await app.inject({
    method: 'POST',
    url: '/nowhere',
    headers: { 'content-type': 'application/json', 'content-encoding': 'bogus', expect: '100-continue' },
    payload: '{"input":[1]}',
  });
  assert.equal(response.statusCode, 404);
  // serviceHeaders ran; the coding no hook read (content-coding answers it 415 on a route).
  assert.match(String(response.headers['x-request-id']), /^[\w-]+$/);
  assert.equal(response.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
  assert.equal(app.memory.budget.waits + app.memory.budget.tooLarge, 0);
  const onRoute = await app.inject({
    method: 'POST',
    url: '/api/sort',
    headers: { 'content-type': 'application/json', 'content-encoding': 'bogus' },
    payload: '{}',
  });
  assert.equal(onRoute.statusCode, 415);
});
