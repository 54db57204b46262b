import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from './process.js';

test('the entry listens where PORT and HOST say, prints the docs URL, serves, and exits 0 on SIGTERM', async (t) => {
  const server = await startServer(t, { DRAIN_DELAY_MS: '0' });
  assert.match(
    server.output(),
    /^JSON utility service listening on http:\/\/127\.0\.0\.1:\d+\nAPI docs: http:\/\/127\.0\.0\.1:\d+\/api\/docs\nMemory: [\d.]+ [KMG]iB \(MEMORY_LIMIT=auto: the (machine|cgroup)'s\), [\d.]+ [KMG]iB of it for requests; bodies over 64 KiB go to \d+ worker threads? of \d+ MiB heap\n$/,
  );
  const answer = await fetch(`${server.base}/api/isOdd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"input":9007199254740993}',
  });
  assert.deepEqual(await answer.json(), { ret: true });
  assert.equal((await fetch(`${server.base}/api/docs`)).status, 200);
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0);
});

test('a bad variable stops the start with a message naming it', async (t) => {
  await assert.rejects(startServer(t, { PORT: 'eighty' }), /PORT="eighty" is invalid: it accepts an integer from 0 to 65535/);
});

test('LOG_FORMAT=pretty prints for a person; the default is one JSON object per line', async (t) => {
  const pretty = await startServer(t, { LOG_FORMAT: 'pretty', LOG_LEVEL: 'info', ACCESS_LOG: 'all', DRAIN_DELAY_MS: '0' });
  await fetch(`${pretty.base}/api/isEven/2`, { headers: { 'x-request-id': 'pretty-1' } });
  pretty.child.kill('SIGTERM');
  assert.equal(await pretty.exited, 0);
  // pino-pretty: a "[time] INFO (pid): request" line, then the fields indented below it.
  assert.match(pretty.output(), /^\[[\d:.]+\] INFO \(\d+\): request\n(?: {4}.*\n)*? {4}requestId: "pretty-1"$/m);

  const json = await startServer(t, { LOG_LEVEL: 'info', ACCESS_LOG: 'all', DRAIN_DELAY_MS: '0' });
  await fetch(`${json.base}/api/isEven/2`, { headers: { 'x-request-id': 'json-1' } });
  json.child.kill('SIGTERM');
  assert.equal(await json.exited, 0);
  const jsonLine =
    json
      .output()
      .split('\n')
      .find((line) => line.includes('json-1')) ?? '';
  assert.deepEqual(
    (({ level, msg, requestId, status, route }) => ({ level, msg, requestId, status, route }))(JSON.parse(jsonLine) as Record<string, unknown>),
    { level: 30, msg: 'request', requestId: 'json-1', status: 200, route: '/api/isEven/:number' },
  );
});

test('buffered logs (LOG_FLUSH_MS): a request line is written within the interval while the service runs, and every line on exit', async (t) => {
  const server = await startServer(t, { LOG_LEVEL: 'info', ACCESS_LOG: 'all', LOG_FLUSH_MS: '100', DRAIN_DELAY_MS: '0' });
  await fetch(`${server.base}/api/isEven/2`, { headers: { 'x-request-id': 'flushed-by-timer' } });
  const deadline = Date.now() + 2_000;
  while (!server.output().includes('flushed-by-timer') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(server.output().includes('flushed-by-timer'), 'the line waited longer than the flush interval');

  // A long interval: only the exit can write these lines.
  const slow = await startServer(t, { LOG_LEVEL: 'info', ACCESS_LOG: 'all', LOG_FLUSH_MS: '10000', DRAIN_DELAY_MS: '0' });
  for (let i = 0; i < 5; i++) await fetch(`${slow.base}/api/isEven/${i}`, { headers: { 'x-request-id': `on-exit-${i}` } });
  slow.child.kill('SIGTERM');
  assert.equal(await slow.exited, 0);
  for (let i = 0; i < 5; i++) assert.ok(slow.output().includes(`"requestId":"on-exit-${i}"`), `on-exit-${i} was lost`);
  assert.match(slow.output(), /"msg":"closed: every request answered"/);
});
