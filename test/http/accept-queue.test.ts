import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from './helper.js';
import { AcceptQueue, RequestTime } from '../../src/http/protocol/queue-delay.js';

/**
 * A child process that opens `count` connections to `port`, one every `everyMs` (0: at once), each
 * sending `request` (if any), and prints each answer's status line (or the error) as one JSON
 * array when all are done, then how long each connection took from its opening to its close.
 */
function connectMany(
  port: number,
  count: number,
  everyMs: number,
  request = '',
): { statuses: Promise<string[]>; durations: Promise<number[]>; stop: () => void } {
  const script = `
    const net = require('node:net');
    const statuses = [];
    const durations = [];
    const open = () => {
      const openedAt = performance.now();
      const socket = net.connect(${port}, '127.0.0.1', () => socket.write(${JSON.stringify(request)}));
      let answer = '';
      socket.on('data', (chunk) => { answer += chunk; });
      socket.on('error', (error) => { answer = error.code; });
      socket.on('close', () => {
        statuses.push(answer.split('\\r\\n').find((line) => /^HTTP|retry-after/i.test(line)) ? answer.split('\\r\\n').filter((line) => /^HTTP|^retry-after/i.test(line)).join(' ') : answer);
        durations.push(performance.now() - openedAt);
        if (statuses.length === ${count}) console.log(JSON.stringify([statuses, durations]));
      });
      if (${JSON.stringify(request)} === '') setTimeout(() => socket.destroy(), 3000);
    };
    const start = performance.now();
    let opened = 0;
    const next = () => {
      while (opened < ${count} && performance.now() - start >= opened * ${everyMs}) { open(); opened++; }
      if (opened < ${count}) setImmediate(next);
    };
    next();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const results = new Promise<[string[], number[]]>((resolve) =>
    child.on('close', () => resolve(output === '' ? [[], []] : (JSON.parse(output) as [string[], number[]]))),
  );
  return { statuses: results.then(([statuses]) => statuses), durations: results.then(([, durations]) => durations), stop: () => child.kill() };
}

/** Keeps the event loop busy for `ms`. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Spends `ms` of the event loop on each connection it accepts: connections that come at once queue in the kernel. */
function slowToAccept(server: Server, ms: number): void {
  server.on('connection', () => busyFor(ms));
}

/**
 * A bare server listening on a free port, its accepted sockets, and an AcceptQueue watching it with
 * the RequestTime it reads (no request is counted unless the test does); all closed after `t`.
 */
async function watchedServer(t: TestContext): Promise<{ server: Server; accepted: Socket[]; queue: AcceptQueue; requestTime: RequestTime; port: number }> {
  const server = createServer();
  const accepted: Socket[] = [];
  server.on('connection', (socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address !== 'string');
  const requestTime = new RequestTime();
  const queue = new AcceptQueue(server, 1, requestTime);
  t.after(() => {
    queue.close();
    requestTime.close();
    for (const socket of accepted) socket.destroy();
    server.close();
  });
  return { server, accepted, queue, requestTime, port: address.port };
}

test(
  'AcceptQueue: connections the kernel holds while the loop accepts one a turn are seen, and their wait',
  { skip: process.platform !== 'linux' },
  async (t) => {
    const { server, accepted, queue, port } = await watchedServer(t);
    await sleep(50);
    assert.equal(queue.ms(), 0, 'idle');
    // 5 ms a connection against one every 2.5 ms: the queue grows by 200 a second. It is read every
    // 200 ms while empty, every 10 ms while not. (A burst at once, which only drains, counts 0: below.)
    slowToAccept(server, 5);
    const clients = connectMany(port, 300, 2.5);
    t.after(clients.stop);
    let longestMs = 0;
    let queuedThen = 0;
    let grew = false;
    for (let i = 0; i < 40; i++) {
      await sleep(20);
      if (queue.ms() > longestMs) [longestMs, queuedThen] = [queue.ms(), 300 - accepted.length];
      grew ||= queue.grows();
    }
    // Twice as many arrive as are accepted: a queue that grows whatever is admitted.
    assert.ok(grew, 'seen to grow');
    // Some tens of connections, each accepted 5 ms after the one before, or later on a loaded machine.
    assert.ok(
      queuedThen >= 20 && longestMs >= 3 * queuedThen && longestMs <= 50 * queuedThen,
      `${longestMs} ms with ${queuedThen} of 300 connections not yet accepted`,
    );
    for (let waited = 0; accepted.length < 300 && waited < 10_000; waited += 50) await sleep(50);
    assert.equal(accepted.length, 300, 'all accepted in the end');
    await sleep(50);
    assert.equal(queue.ms(), 0, 'drained');
    assert.equal(queue.grows(), false, 'drained, no longer growing');
  },
);

test(
  "AcceptQueue: while every connection is refused the answers' rate is unknown, and a queue that stands is no burst",
  { skip: process.platform !== 'linux' },
  async (t) => {
    const { server, queue, port } = await watchedServer(t);
    // Past capacity every tick refuses, so none measures the rate of answers.
    server.on('connection', () => queue.refused());
    slowToAccept(server, 5);
    const clients = connectMany(port, 300, 2.5);
    t.after(clients.stop);
    let longestMs = 0;
    let grew = false;
    for (let i = 0; i < 40; i++) {
      await sleep(20);
      longestMs = Math.max(longestMs, queue.ms());
      grew ||= queue.grows();
    }
    assert.ok(grew && longestMs > 0, `grew: ${grew}, longest wait ${longestMs} ms`);
  },
);

test(
  'AcceptQueue: a stall that slows the accepts is judged by the rate of answers remembered, no overload; one that lasts a second is',
  { skip: process.platform !== 'linux' },
  async (t) => {
    const { server, accepted, queue, requestTime, port } = await watchedServer(t);
    const start = performance.now();
    // A connection a request, 0.5 ms of the loop each for three seconds (RequestTime's windows are
    // seconds from its start), then 10 ms each: 200 arrive a second, 100 are accepted.
    const stallAfterMs = 3_050;
    server.on('connection', () => {
      requestTime.admitted();
      busyFor(performance.now() - start < stallAfterMs ? 0.5 : 10);
    });
    const clients = connectMany(port, 1200, 5);
    t.after(clients.stop);
    while (performance.now() - start < stallAfterMs + 50) await sleep(20);
    assert.ok(requestTime.ms() >= 0.3 && requestTime.ms() < 5, `the loop's time a request before the stall: ${requestTime.ms()} ms`);
    // Within the stall's first second: the queue grows at the stall's pace, but arrivals are about an
    // eighth of the rate the loop answered at a second ago, so it drains once the stall ends.
    let longestMs = 0;
    let grew = false;
    let mostQueued = 0;
    while (performance.now() - start < stallAfterMs + 850) {
      await sleep(20);
      longestMs = Math.max(longestMs, queue.ms());
      grew ||= queue.grows();
      mostQueued = Math.max(mostQueued, Math.round((performance.now() - start - 100) / 5) - accepted.length);
    }
    assert.ok(mostQueued >= 15, `${mostQueued} connections queued at most during the stall`);
    assert.deepEqual({ longestMs, grew }, { longestMs: 0, grew: false }, 'a stall of under a second');
    // Two seconds on, the windows measure the stall's 10 ms a request: the queue grows.
    while (performance.now() - start < stallAfterMs + 2_100) await sleep(20);
    for (let i = 0; i < 20 && !grew; i++) {
      await sleep(20);
      grew = queue.grows() && queue.ms() > 0;
    }
    assert.ok(requestTime.ms() >= 5, `the loop's time a request once the stall has lasted: ${requestTime.ms()} ms`);
    assert.ok(grew, 'a stall that lasts is a queue that grows');
  },
);

test(
  "AcceptQueue: at capacity its rate is the accepts', which traffic on kept-alive connections slows: a queue of new ones then grows",
  { skip: process.platform !== 'linux' },
  async (t) => {
    const { queue, requestTime, port } = await watchedServer(t);
    // Turns of 30 ms, each 30 requests of 1 ms on connections already open: the loop has no time to
    // spare, and accepts one new connection a turn, 33 a second, against 50 arriving.
    let kept = true;
    const turn = (): void => {
      for (let i = 0; i < 30; i++) {
        requestTime.admitted();
        busyFor(1);
      }
      if (kept) setImmediate(turn);
    };
    setImmediate(turn);
    t.after(() => (kept = false));
    const clients = connectMany(port, 150, 20);
    t.after(clients.stop);
    const start = performance.now();
    while (performance.now() - start < 1_200) await sleep(20);
    let grew = false;
    while (!grew && performance.now() - start < 2_800) {
      await sleep(20);
      grew = queue.grows() && queue.ms() > 0;
    }
    kept = false;
    assert.ok(requestTime.ms() > 0 && !requestTime.hadTimeToSpare(), `${requestTime.ms()} ms a request, no time to spare`);
    assert.ok(grew, 'timed by the rate of answers alone, a connection a request, it would be a burst');
  },
);

const ISEVEN = 'POST /api/isEven HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{"input":2}';
const REFUSED = 'HTTP/1.1 503 Service Unavailable retry-after: 1';

/** The app, listening, spending 5 ms on each connection it accepts: 200 a second at most. */
async function slowApp(t: TestContext, overloadTargetMs = 20): Promise<number> {
  const app = await build(t, { overloadTargetMs });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert.ok(address !== null && typeof address !== 'string');
  slowToAccept(app.server, 5);
  return address.port;
}

test(
  'OVERLOAD_TARGET_MS: new connections arriving faster than they are answered wait in the kernel and are refused, 503 with Retry-After, though the loop is prompt',
  { skip: process.platform !== 'linux' },
  async (t) => {
    // 400 a second for 0.75 s against 200: the loop's own delay stays under the target, the accept queue grows.
    const clients = connectMany(await slowApp(t), 300, 2.5, ISEVEN);
    t.after(clients.stop);
    const statuses = await clients.statuses;
    const refused = statuses.filter((status) => status === REFUSED).length;
    const answered = statuses.filter((status) => status === 'HTTP/1.1 200 OK').length;
    assert.equal(answered + refused, 300, statuses.filter((s) => !s.startsWith('HTTP/1.1 200') && s !== REFUSED).join(', '));
    assert.ok(refused > 0 && refused < 300, `${refused} of 300 refused`);
  },
);

test(
  'OVERLOAD_TARGET_MS: the accept queue is held to under a third of the target, so a refused connection has waited less than the target',
  { skip: process.platform !== 'linux' },
  async (t) => {
    // 400 a second for 1.5 s against an app that spends 5 ms on each answer (a refusal costs far less),
    // with a target of 60 ms: refusals hold the queue at 18 ms, that of four answers or so.
    const app = await build(t, { overloadTargetMs: 60 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    assert.ok(address !== null && typeof address !== 'string');
    app.server.on('request', (_request, response: ServerResponse) => {
      response.on('finish', () => {
        busyFor(response.statusCode === 200 ? 5 : 0);
      });
    });
    const clients = connectMany(address.port, 600, 2.5, ISEVEN);
    t.after(clients.stop);
    const [statuses, durations] = await Promise.all([clients.statuses, clients.durations]);
    const refusedMs = durations.filter((_, i) => statuses[i] === REFUSED).sort((a, b) => a - b);
    assert.ok(refusedMs.length > 50, `${refusedMs.length} of 600 refused`);
    const median = refusedMs[Math.floor(refusedMs.length / 2)] ?? Number.NaN;
    assert.ok(median < 45, `refused after ${median.toFixed(1)} ms (median), three quarters of the target or more`);
  },
);

test(
  'OVERLOAD_TARGET_MS: a burst of connections opened at once, which the queue drains, is no overload: none refused',
  { skip: process.platform !== 'linux' },
  async (t) => {
    // 100 at once: the last waits half a second, but nothing comes after them.
    const clients = connectMany(await slowApp(t), 100, 0, ISEVEN);
    t.after(clients.stop);
    const statuses = await clients.statuses;
    assert.deepEqual(
      statuses.filter((status) => status !== 'HTTP/1.1 200 OK'),
      [],
    );
  },
);
