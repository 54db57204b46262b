import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
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
  await app.register(routeConfig, { codesAnswers: true });
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
  await app.register(routeConfig, { codesAnswers: true });
  void app.register(accessLog, { metrics: createHttpMetrics(), policy: { mode: 'minimal' }, slowRequestMs: 1000 });
  await assert.rejects(async () => app.ready(), /operationTally/);
  const decorated = Fastify();
  decorated.decorate('serviceLog', decorated.log);
  await decorated.register(connections, { ...DEFAULT_CONFIG });
  await decorated.register(routeConfig, { codesAnswers: true });
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

test("a route's config is read from Fastify once for the route and given to each of its requests", async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  const seen: Array<{ given: boolean; url: string | undefined; config: unknown }> = [];
  app.addHook('onSend', (request, _reply, payload, done) => {
    const given = request.routeConfig !== undefined;
    // Fastify's getter builds a new object at each read; the config inside is the route's own.
    const config = routeConfigOf(request);
    assert.equal(config, request.routeOptions.config);
    seen.push({ given, url: config.url, config });
    done(null, payload);
  });
  await app.inject({ method: 'POST', url: '/api/isEven', payload: { input: 2 } });
  await app.inject({ method: 'POST', url: '/api/isEven', payload: { input: 3 } });
  await app.inject({ method: 'GET', url: '/api/isOdd/3' });
  // A path that is no route has no hook of its own: its config is read when asked.
  await app.inject({ method: 'GET', url: '/nowhere' });
  assert.deepEqual(
    seen.map(({ given, url }) => ({ given, url })),
    [
      { given: true, url: '/api/isEven' },
      { given: true, url: '/api/isEven' },
      { given: true, url: '/api/isOdd/:number' },
      { given: false, url: undefined },
    ],
  );
  assert.equal(seen[0]?.config, seen[1]?.config);
});

test('the body hooks are on the routes that take a body alone: a GET or a probe runs none', async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  await app.ready();
  // Fastify's tree of routes with their hooks: each node after the one before it, the last with its hooks.
  const hooksOf = (method: string, ...nodes: string[]) => {
    const lines = app.printRoutes({ includeHooks: true, commonPrefix: false, method }).split('\n');
    let at = -1;
    for (const node of nodes) at = lines.findIndex((line, i) => i > at && line.includes(`── ${node}`));
    assert.ok(at >= 0 && lines[at]?.includes(`(${method})`), `${method} ${nodes.join('')} is a route`);
    const hooks = lines.slice(at + 1);
    return hooks
      .slice(
        0,
        hooks.findIndex((line) => !line.includes('•')),
      )
      .join('\n');
  };
  const isEven = hooksOf('POST', '/api/isEven');
  assert.match(isEven, /\(preParsing\) \["reserveMemory\(\)","decode\(\)"\]/);
  assert.match(isEven, /\(preValidation\) \["shrinkToBody\(\)"\]/);
  // The stream's reservation is fixed: nothing to shrink once its body has come.
  assert.match(hooksOf('POST', '/api/stream'), /\(preParsing\) \["reserveMemory\(\)","decode\(\)"\]/);
  assert.doesNotMatch(hooksOf('POST', '/api/stream'), /preValidation/);
  assert.match(hooksOf('GET', '/api/isOdd', '/:number'), /onRequest/);
  assert.doesNotMatch(hooksOf('GET', '/api/isOdd', '/:number'), /preParsing|preValidation/);
  assert.doesNotMatch(hooksOf('GET', '/healthz'), /preParsing|preValidation/);
});
