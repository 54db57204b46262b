import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { ENTRY, START_ARGS, startServer } from './process.js';

/** Every line of standard output, each parsed as a JSON object (a line that is not one fails the test). */
function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new assert.AssertionError({ message: `not a JSON line: ${line}` });
      }
    });
}

test('the entry listens where PORT and HOST say, writes one JSON "listening" line with the docs URL, serves, and exits 0 on SIGTERM', async (t) => {
  const server = await startServer(t, { DRAIN_DELAY_MS: '0', LOG_LEVEL: 'info' });
  const answer = await fetch(`${server.base}/api/isOdd`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"input":9007199254740993}',
  });
  assert.deepEqual(await answer.json(), { ret: true });
  assert.equal((await fetch(`${server.base}/api/docs`)).status, 200);
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0);
  // Standard output, whole, from its first byte: one JSON object per line, and one listening line.
  const lines = jsonLines(server.output());
  const listening = lines.filter((line) => /listening/.test(String(line.msg)));
  assert.equal(listening.length, 1, server.output());
  const [line] = listening as [Record<string, unknown>];
  assert.match(String(line.msg), /^listening on http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(line.docs, `${server.base}/api/docs`);
  assert.equal(line.level, 30);
  assert.match(
    String(line.memory),
    /^[\d.]+ [KMG]iB \(MEMORY_LIMIT=auto: the (machine|cgroup)'s\), [\d.]+ [KMG]iB of it for requests; bodies over 64 KiB go to \d+ worker threads? of \d+ MiB heap$/,
  );
  assert.ok(lines.some((entry) => entry.msg === 'closed: every request answered'));
});

test('the listening line is written whatever LOG_LEVEL says, but silent', async (t) => {
  const quiet = await startServer(t, { DRAIN_DELAY_MS: '0', LOG_LEVEL: 'error' });
  quiet.child.kill('SIGTERM');
  assert.equal(await quiet.exited, 0);
  assert.deepEqual(
    jsonLines(quiet.output()).map((line) => line.msg),
    [`listening on ${quiet.base}`],
  );
});

test('a busy port: one line naming the address and PORT on standard error, exit 1, nothing else', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => holder.close());
  const port = (holder.address() as AddressInfo).port;
  for (const workers of ['1', '2']) {
    const child = spawn(process.execPath, START_ARGS, {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', WORKERS: workers },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1, `WORKERS=${workers}: ${stderr}`);
    assert.match(
      stderr,
      new RegExp(`^Cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use by another process; set PORT or HOST to another \\(EADDRINUSE\\)\\n`),
    );
    assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
    if (workers === '1') assert.equal(stderr.split('\n').filter(Boolean).length, 1, stderr);
    jsonLines(stdout);
  }
});

test('a second SIGTERM exits at once, with 1, while the first still waits out the drain delay', async (t) => {
  for (const workers of ['1', '2']) {
    const server = await startServer(t, { DRAIN_DELAY_MS: '20000', WORKERS: workers });
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(server.child.exitCode, null, 'the first signal waits for the drain delay');
    const started = Date.now();
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 1, `WORKERS=${workers}`);
    assert.ok(Date.now() - started < 2_000, `WORKERS=${workers}: exited after ${Date.now() - started} ms`);
  }
});

test('SIGINT (Ctrl-C) does not wait out the drain delay meant for load balancers; it still finishes and exits 0', async (t) => {
  for (const workers of ['1', '2']) {
    const server = await startServer(t, { DRAIN_DELAY_MS: '20000', WORKERS: workers });
    const started = Date.now();
    // As a terminal sends it: to the whole process group.
    process.kill(-(server.child.pid as number), 'SIGINT');
    assert.equal(await server.exited, 0, `WORKERS=${workers}`);
    assert.ok(Date.now() - started < 5_000, `WORKERS=${workers}: exited after ${Date.now() - started} ms`);
  }
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

test('on a Node.js outside engines, the service and the command each say so in one line and exit 1 before loading anything', async () => {
  // The process believes it is Node 20.20.2, the machine's own and past its end of life.
  const pretend = ['--import', 'data:text/javascript,Object.defineProperty(process,"version",{value:"v20.20.2"})'];
  const cli = new URL('../dist/cli.js', import.meta.url).pathname;
  for (const entry of [ENTRY, cli]) {
    const child = spawn(process.execPath, [...pretend, entry, '--version'], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1, entry);
    assert.equal(stdout, '', 'nothing listened, nothing printed');
    assert.equal(
      stderr,
      'json-utility-service needs Node.js ^22.12.0 || ^24.11.0 || ^26.0.0 (package.json engines); this is v20.20.2. ' +
        'Run it with Node.js 22, 24 or 26 first on PATH; in a checkout of the repository: export PATH="$(bash scripts/node.sh 22):$PATH"\n',
    );
  }
});
