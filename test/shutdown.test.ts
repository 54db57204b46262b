import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { startServer, type RunningServer } from './process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SIZE = 300_000;
const NUMBERS = JSON.stringify({ input: Array.from({ length: SIZE }, (_, i) => ((i * 7919) % SIZE) / 7 - 1000) });

interface Received {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * POSTs a large sort over a keep-alive connection. `onHeaders` runs once the response starts,
 * while reading is paused for `pauseMs`, so that the server still has most of the body to write.
 */
function bigSort(server: RunningServer, onSent: () => void, onHeaders: () => void = () => {}, pauseMs = 0): Promise<Received> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ keepAlive: true });
    const req = request(`${server.base}/api/sort`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
      if (pauseMs > 0) {
        res.pause();
        onHeaders();
        setTimeout(() => res.resume(), pauseMs);
      } else {
        onHeaders();
      }
    });
    req.on('error', reject);
    req.end(NUMBERS, onSent);
  });
}

function assertWholeSort(received: Received): void {
  assert.equal(received.status, 200);
  const { sortedArray } = JSON.parse(received.body) as { sortedArray: number[] };
  assert.equal(sortedArray.length, SIZE);
  for (let i = 1; i < SIZE; i++) if ((sortedArray[i - 1] as number) > (sortedArray[i] as number)) assert.fail(`out of order at ${i}`);
}

async function refusesConnections(server: RunningServer): Promise<boolean> {
  try {
    await fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(2000) });
    return false;
  } catch {
    return true;
  }
}

for (const workers of ['1', '2']) {
  describe(`graceful shutdown with WORKERS=${workers}`, () => {
    test('SIGTERM while a large sort is processed: readiness turns 503 at once, the response arrives whole, exit 0', async (t) => {
      const server = await startServer(t, { WORKERS: workers, DRAIN_DELAY_MS: '400', SHUTDOWN_TIMEOUT_MS: '15000' });
      let readiness: number | undefined;
      const received = await bigSort(server, () => {
        server.child.kill('SIGTERM');
        // During the drain delay the server still accepts connections, and says it is not ready.
        void sleep(100).then(async () => (readiness = (await fetch(`${server.base}/readyz`)).status));
      });
      assertWholeSort(received);
      await sleep(150);
      assert.equal(readiness, 503);
      assert.equal(await server.exited, 0, `${server.output()}\n${server.errors()}`);
    });

    test('SIGTERM while a large response is still being written to a slow reader, with no drain delay: it arrives whole, exit 0', async (t) => {
      const server = await startServer(t, { WORKERS: workers, DRAIN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '15000' });
      let refused: boolean | undefined;
      const received = await bigSort(
        server,
        () => {},
        () => {
          server.child.kill('SIGTERM');
          // No new connection is accepted once the server closes, while this response goes on.
          void sleep(300).then(async () => (refused = await refusesConnections(server)));
        },
        800,
      );
      assertWholeSort(received);
      assert.equal(refused, true);
      assert.equal(await server.exited, 0, `${server.output()}\n${server.errors()}`);
    });
  });
}

// Seen by an operator: after two clients held 24,000 connections and dropped them, a SIGTERM with no
// request in flight waited out SHUTDOWN_TIMEOUT_MS and exited 1; the sockets left were ended by the
// service and never closed by their peers. A client that keeps its side open after the service's
// FIN is that socket, every time.
test('SIGTERM with idle connections whose clients never close their side: exit 0 within DRAIN_DELAY_MS plus LINGER_MS', async (t) => {
  const server = await startServer(t, { DRAIN_DELAY_MS: '300', LINGER_MS: '1000', SHUTDOWN_TIMEOUT_MS: '20000' });
  const sockets: Socket[] = [];
  t.after(() => sockets.forEach((socket) => socket.destroy()));
  for (let i = 0; i < 20; i++) {
    // allowHalfOpen: the service's FIN ends this side's reading, and this side never ends its own.
    const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => {});
    socket.resume();
    await once(socket, 'connect');
    // Half of them served a request first: idle keep-alive connections, as a pool holds them.
    if (i % 2 === 0) {
      socket.write(`GET /api/isOdd/${i} HTTP/1.1\r\nHost: x\r\n\r\n`);
      await once(socket, 'data');
    }
    sockets.push(socket);
  }
  const started = Date.now();
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0, server.output());
  const took = Date.now() - started;
  assert.ok(took < 300 + 1000 + 2000, `exit took ${took} ms`);
  assert.doesNotMatch(server.output(), /shutdown deadline passed/);
});

test('the hard deadline bounds shutdown: a drain that cannot finish in time exits 1', async (t) => {
  const server = await startServer(t, { DRAIN_DELAY_MS: '300', SHUTDOWN_TIMEOUT_MS: '600' });
  // A client that stalls mid-request keeps its connection open past the deadline.
  const stalled = request(`${server.base}/api/sort`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '1000' } });
  stalled.on('error', () => {});
  stalled.write('{"input":[');
  await sleep(100);
  const started = Date.now();
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 1);
  const took = Date.now() - started;
  assert.ok(took >= 550 && took < 3000, `${took} ms`);
  stalled.destroy();
});
