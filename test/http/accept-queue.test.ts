import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from './helper.js';
import { AcceptQueue } from '../../src/http/protocol/queue-delay.js';

/**
 * A child process that opens `count` connections to `port` at once, each sending `request` (if
 * any), and prints each answer's status line (or the error) as one JSON array when all are done.
 */
function connectMany(port: number, count: number, request = ''): { statuses: Promise<string[]>; stop: () => void } {
  const script = `
    const net = require('node:net');
    const statuses = [];
    for (let i = 0; i < ${count}; i++) {
      const socket = net.connect(${port}, '127.0.0.1', () => socket.write(${JSON.stringify(request)}));
      let answer = '';
      socket.on('data', (chunk) => { answer += chunk; });
      socket.on('error', (error) => { answer = error.code; });
      socket.on('close', () => {
        statuses.push(answer.split('\\r\\n').find((line) => /^HTTP|retry-after/i.test(line)) ? answer.split('\\r\\n').filter((line) => /^HTTP|^retry-after/i.test(line)).join(' ') : answer);
        if (statuses.length === ${count}) console.log(JSON.stringify(statuses));
      });
      if (${JSON.stringify(request)} === '') setTimeout(() => socket.destroy(), 3000);
    }`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const statuses = new Promise<string[]>((resolve) => child.on('close', () => resolve(output === '' ? [] : (JSON.parse(output) as string[]))));
  return { statuses, stop: () => child.kill() };
}

/** Spends `ms` of the event loop on each connection it accepts: connections that come at once queue in the kernel. */
function slowToAccept(server: Server, ms: number): void {
  server.on('connection', () => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  });
}

test(
  'AcceptQueue: connections the kernel holds while the loop accepts one a turn are seen, and their wait',
  { skip: process.platform !== 'linux' },
  async (t) => {
    const server = createServer();
    const accepted: Socket[] = [];
    server.on('connection', (socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address !== null && typeof address !== 'string');
    const queue = new AcceptQueue(server, 1);
    t.after(() => {
      queue.close();
      for (const socket of accepted) socket.destroy();
      server.close();
    });
    await sleep(50);
    assert.equal(queue.ms(), 0, 'idle');
    // 5 ms a connection: 200 at once wait up to a second. The queue is read every 200 ms while it is
    // empty, every 10 ms while it is not.
    slowToAccept(server, 5);
    const clients = connectMany(address.port, 200);
    t.after(clients.stop);
    let longestMs = 0;
    let queuedThen = 0;
    for (let i = 0; i < 30; i++) {
      await sleep(20);
      if (queue.ms() > longestMs) [longestMs, queuedThen] = [queue.ms(), 200 - accepted.length];
    }
    // Some tens of connections, each accepted 5 ms after the one before.
    assert.ok(
      queuedThen >= 20 && longestMs >= 3 * queuedThen && longestMs <= 10 * queuedThen,
      `${longestMs} ms with ${queuedThen} of 200 connections not yet accepted`,
    );
    await sleep(800);
    assert.equal(accepted.length, 200, 'all accepted in the end');
    assert.equal(queue.ms(), 0, 'drained');
  },
);

test(
  'OVERLOAD_TARGET_MS: new connections that wait in the kernel past the target are refused, 503 with Retry-After, though the loop is prompt',
  { skip: process.platform !== 'linux' },
  async (t) => {
    const app = await build(t, { overloadTargetMs: 20 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    assert.ok(address !== null && typeof address !== 'string');
    // 5 ms a connection: the loop's own delay stays under the target, while 150 connections at
    // once wait behind one another for up to three quarters of a second.
    slowToAccept(app.server, 5);
    const request = 'POST /api/isEven HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{"input":2}';
    const clients = connectMany(address.port, 150, request);
    t.after(clients.stop);
    const statuses = await clients.statuses;
    const count = (line: string) => statuses.filter((status) => status === line).length;
    const refused = count('HTTP/1.1 503 Service Unavailable retry-after: 1');
    assert.equal(count('HTTP/1.1 200 OK') + refused, 150, statuses.filter((s) => !s.startsWith('HTTP/1.1 200') && !s.startsWith('HTTP/1.1 503')).join(', '));
    assert.ok(refused > 0 && refused < 150, `${refused} of 150 refused`);
    assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/2' })).statusCode, 200, 'served once the queue is gone');
  },
);
