import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';

// A client that goes away is the client's doing, not a failure of the service (access-log.ts):
// an aborted upload, a client that stops waiting (its own timeout) and a reset in the middle of an
// answer each get one line at level info naming the stage and the reason, no stack, and a count in
// http_clients_gone_total; no line at level error. Over real sockets, as such clients do it.

interface Line {
  level: number;
  msg: string;
  stage?: string;
  reason?: string;
  requestId?: string;
  err?: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A request head and as much of its body as `sent`, on a new connection. */
function send(port: number, path: string, headers: string, body: string, declaredLength = Buffer.byteLength(body)): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${declaredLength}\r\n${headers}\r\n`);
      socket.write(body, () => resolve(socket));
    });
    socket.on('error', reject);
  });
}

async function until(what: string, done: () => boolean | Promise<boolean>, extra = () => ''): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await done())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${extra()}`);
    await sleep(20);
  }
}

async function listening(t: { after: (fn: () => Promise<unknown>) => void }): Promise<{ app: FastifyInstance; port: number; lines: Line[] }> {
  const lines: Line[] = [];
  const stream = new Writable({
    write: (chunk, _encoding, done) => (
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter(Boolean)
          .map((text) => JSON.parse(text) as Line),
      ),
      done()
    ),
  });
  const app = await buildApp({}, { logger: { level: 'info', stream } });
  t.after(() => app.close());
  const port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
  return { app, port, lines };
}

const gone = (lines: Line[], stage: string) => lines.filter((line) => line.msg === 'client went away' && line.stage === stage);

test('an aborted upload, a client that stops waiting and a reset mid-answer: a line at level 30 each, counted, none at 50', async (t) => {
  const { app, port, lines } = await listening(t);

  // An upload cut off halfway, its client's id kept on the line: once the service has its headers.
  const uploadArrived = once(app.server, 'request');
  const upload = await send(port, '/api/sort', 'X-Request-Id: upload-1\r\n', '{"input":[1,2,', 1000);
  await uploadArrived;
  upload.destroy();
  await until('the aborted upload', () => gone(lines, 'upload').length === 1);
  assert.equal(gone(lines, 'upload')[0]?.requestId, 'upload-1');

  // A client that sends its whole body, then gives up before the answer (its own timeout): the
  // answer would be gzip-coded, a stream whose premature close reached the error handler.
  const numbers = JSON.stringify({ input: Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 100_003) });
  // Gone once the service has read the whole body, while it sorts.
  const bodyRead = once(app.server, 'request').then(([request]) => once(request as IncomingMessage, 'end'));
  const waiting = await send(port, '/api/sort', 'Accept-Encoding: gzip\r\n', numbers);
  await bodyRead;
  waiting.destroy();
  await until('the client that stopped waiting', () => gone(lines, 'waiting').length === 1);

  // A reset once the answer has begun: the client reads the first bytes of a 14 MB answer, then resets.
  const words = JSON.stringify({ input: Array.from({ length: 600_000 }, (_, i) => `word-${String(i).padStart(16, '0')}`) });
  const reader = await send(port, '/api/sort', '', words);
  // It stops reading with its first bytes: the rest of the answer waits in the service, which
  // loopback's buffers, not grown by a reader that reads nothing more, cannot take whole.
  const firstBytes = await new Promise((resolve) =>
    reader.once('data', (chunk) => {
      reader.pause();
      resolve(chunk);
    }),
  );
  assert.match(String(firstBytes), /^HTTP\/1\.1 200 /);
  reader.resetAndDestroy();
  await until(
    'the reset mid-answer',
    () => gone(lines, 'answer').length === 1,
    () => JSON.stringify(lines.slice(-3)),
  );

  const metrics = await app.inject({ method: 'GET', url: '/metrics' });
  for (const stage of ['upload', 'waiting', 'answer']) assert.match(metrics.body, new RegExp(`^http_clients_gone_total\\{stage="${stage}"\\} 1$`, 'm'));
  // The service still answers, and nothing it logged was an error or carried a stack.
  assert.equal((await fetch(`http://127.0.0.1:${port}/api/isEven/4`)).status, 200);
  await sleep(100);
  for (const line of lines) {
    assert.ok(line.level <= 40, JSON.stringify(line));
    assert.equal(line.err, undefined, JSON.stringify(line));
    if (line.msg === 'client went away') assert.match(line.reason ?? '', /^the connection closed (before|while) /);
  }
});
