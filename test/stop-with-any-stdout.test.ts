import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { START_ARGS } from './process.js';

/**
 * Whatever standard output does, SIGTERM and SIGINT stop the service (issue: a reader gone made
 * sonic-boom 4 retry an EPIPE forever at exit, in a synchronous sleep no signal could interrupt).
 * Each case is a real pipe given to the process as its standard output.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DRAIN_DELAY_MS = 300;
const SHUTDOWN_TIMEOUT_MS = 3000;
// What the issue allows: the drain delay, the shutdown timeout and 2 s.
const STOP_BOUND_MS = DRAIN_DELAY_MS + SHUTDOWN_TIMEOUT_MS + 2000;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A FIFO in a fresh folder, read by `reader` (a shell command given the FIFO as `$0`), opened here for writing. */
async function fifoReadBy(t: TestContext, reader: string): Promise<{ fd: number; readerExited: Promise<unknown> }> {
  const folder = mkdtempSync(join(tmpdir(), 'stdout-'));
  t.after(() => rmSync(folder, { recursive: true, force: true }));
  const fifo = join(folder, 'stdout');
  execFileSync('mkfifo', [fifo]);
  const child = spawn('sh', ['-c', reader, fifo], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const readerExited = once(child, 'exit');
  // Opening for writing waits until the reader has opened its end.
  const fd = openSync(fifo, 'w');
  return { fd, readerExited };
}

type Stdout = 'gone before the first line' | 'gone after the first line' | 'left half way through a line' | 'full and never read';

interface Service {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
  errors(): string;
}

async function startWith(t: TestContext, stdout: Stdout, workers: string): Promise<Service> {
  let fd: number | 'pipe';
  if (stdout === 'gone before the first line') {
    const fifo = await fifoReadBy(t, 'exec true < "$0"');
    await fifo.readerExited;
    fd = fifo.fd;
  } else if (stdout === 'left half way through a line') {
    // head reads 100 bytes, the middle of the first line, and leaves.
    fd = (await fifoReadBy(t, 'head -c 100 "$0" > /dev/null')).fd;
  } else if (stdout === 'full and never read') {
    fd = (await fifoReadBy(t, 'exec sleep 60 < "$0"')).fd;
  } else {
    fd = 'pipe';
  }
  const port = await freePort();
  const child = spawn(process.execPath, START_ARGS, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKERS: workers,
      LOG_LEVEL: 'info',
      ACCESS_LOG: 'all',
      // Its lowest setting, so that a full pipe drops lines after a few thousand requests.
      LOG_BACKLOG_BYTES: '1MiB',
      DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    },
    stdio: ['ignore', fd, 'pipe'],
    detached: true,
  });
  if (typeof fd === 'number') closeSync(fd);
  t.after(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // already gone
    }
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  if (stdout === 'gone after the first line') {
    // As `| grep -m1 listening` does: read up to the listening line, then go.
    let text = '';
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      text += chunk.toString();
      if (text.includes('listening on')) break;
    }
    child.stdout?.destroy();
  }
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `the service did not start: ${stderr}`);
    try {
      if ((await fetch(`${base}/readyz`, { headers: { connection: 'close' } })).status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  return { child, base, exited, errors: () => stderr };
}

/** Requests whose access-log lines (about 1.2 KiB each, for the long path) reach standard output. */
async function logLines(service: Service, count: number): Promise<void> {
  const path = `/${'x'.repeat(1000)}`;
  for (let i = 0; i < count; i += 50) {
    await Promise.all(Array.from({ length: 50 }, async () => (await fetch(`${service.base}${path}`)).arrayBuffer()));
  }
}

/** log_lines_dropped_total once it is above 0 (lines are found undeliverable when the buffer is next written), or 0 after 3 s. */
async function droppedLines(service: Service): Promise<number> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const metrics = await (await fetch(`${service.base}/metrics`, { headers: { connection: 'close' } })).text();
    const dropped = Number(/^log_lines_dropped_total (\d+)$/m.exec(metrics)?.[1]);
    if (dropped > 0 || Date.now() > deadline) return dropped;
    await sleep(100);
  }
}

/** A sort whose body is sent in two halves: the service holds it in flight until `finish()`. */
function inFlight(service: Service): { finish(): void; answer: Promise<{ status: number; body: string }> } {
  const body = JSON.stringify({ input: [3, 1, 2] });
  const req = request(`${service.base}/api/sort`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length) } });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 5));
  return { finish: () => req.end(body.slice(5)), answer };
}

const CASES: readonly Stdout[] = ['gone before the first line', 'gone after the first line', 'left half way through a line', 'full and never read'];

for (const workers of ['1', '2']) {
  describe(`stopping with WORKERS=${workers}, whatever standard output does`, () => {
    for (const [index, stdout] of CASES.entries()) {
      const signal = index % 2 === 0 ? 'SIGTERM' : 'SIGINT';
      test(`standard output ${stdout}: ${signal} finishes the request in flight and exits 0 in time; the lines not written are counted`, async (t) => {
        const service = await startWith(t, stdout, workers);
        // Enough log text to fill a pipe that is never read and the 1 MiB backlog behind it.
        await logLines(service, stdout === 'full and never read' ? 3000 : 100);
        assert.ok((await droppedLines(service)) > 0, 'log_lines_dropped_total counts the lines standard output did not take');
        const request = inFlight(service);
        await sleep(100);
        const started = Date.now();
        service.child.kill(signal);
        await sleep(signal === 'SIGTERM' ? DRAIN_DELAY_MS + 200 : 200);
        request.finish();
        assert.deepEqual(await request.answer, { status: 200, body: '{"sortedArray":[1,2,3]}' });
        assert.equal(await service.exited, 0, service.errors());
        const took = Date.now() - started;
        assert.ok(took < STOP_BOUND_MS, `stopped after ${took} ms`);
      });
    }

    test('standard output gone: a second signal exits at once with 1', async (t) => {
      const service = await startWith(t, 'gone after the first line', workers);
      await logLines(service, 50);
      const request = inFlight(service);
      request.answer.catch(() => {});
      await sleep(100);
      service.child.kill('SIGTERM');
      await sleep(DRAIN_DELAY_MS + 300);
      const started = Date.now();
      service.child.kill('SIGTERM');
      assert.equal(await service.exited, 1, service.errors());
      assert.ok(Date.now() - started < 1000, `exited ${Date.now() - started} ms after the second signal`);
    });
  });
}
