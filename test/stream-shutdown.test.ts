import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { createClient, StreamInterruptedError, type Answer } from '../packages/client/src/index.js';
import { startServer, type RunningServer } from './process.js';

/**
 * A stream running when shutdown begins answers the lines it has read, ends with a 503 line that
 * says how many lines were answered, and ends its response cleanly; the process then exits 0
 * without waiting for SHUTDOWN_TIMEOUT_MS. Each client keeps sending while the service stops.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DRAIN_DELAY_MS = 1500;
// Far above what a stream that ends cleanly takes: an exit near it would mean the stream held the drain.
const SHUTDOWN_TIMEOUT_MS = 20_000;
const ENV = { DRAIN_DELAY_MS: String(DRAIN_DELAY_MS), SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) };
const line = (i: number) => `{"operation":"isEven","input":${i}}\n`;

/** Lines forever, a few at a time, until `stop()`: a client that keeps sending while the service stops. */
function endlessLines(): { lines: AsyncGenerator<{ operation: 'isEven'; input: number }>; stop(): void } {
  let stopped = false;
  return {
    lines: (async function* () {
      for (let i = 0; !stopped; i++) {
        yield { operation: 'isEven' as const, input: i };
        if (i % 20 === 19) await sleep(10);
      }
    })(),
    stop: () => (stopped = true),
  };
}

async function assertExitsSoon(server: RunningServer, signalledAt: number): Promise<void> {
  assert.equal(await server.exited, 0, `${server.output()}\n${server.errors()}`);
  const took = Date.now() - signalledAt;
  assert.ok(took < DRAIN_DELAY_MS + 3000, `exited ${took} ms after SIGTERM`);
}

for (const workers of ['1', '2']) {
  describe(`a stream at shutdown, WORKERS=${workers}`, () => {
    test('the client: stream() yields every answer, then throws StreamInterruptedError with the count; a new stream gets 503 with Retry-After; exit 0 at once', async (t) => {
      const server = await startServer(t, { ...ENV, WORKERS: workers });
      const client = createClient({ baseUrl: server.base });
      const source = endlessLines();
      const answers: Answer[] = [];
      let signalledAt = 0;
      let refused: Response | undefined;
      const error = await (async () => {
        try {
          for await (const answer of client.stream(source.lines)) {
            answers.push(answer);
            if (answers.length === 200) {
              signalledAt = Date.now();
              server.child.kill('SIGTERM');
              // During the drain delay the service still accepts connections: a new stream is refused.
              void sleep(300).then(async () => {
                refused = await fetch(`${server.base}/api/stream`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/x-ndjson', connection: 'close' },
                  body: line(1),
                });
              });
            }
          }
          return undefined;
        } catch (caught) {
          return caught;
        } finally {
          source.stop();
        }
      })();
      assert.ok(error instanceof StreamInterruptedError, `not interrupted: ${String(error)}`);
      assert.equal(error.status, 503);
      assert.equal(error.answered, answers.length);
      assert.equal(error.retryAfterSeconds, 1);
      assert.match(error.detail, new RegExp(`the first ${answers.length} lines of this stream were answered`));
      assert.ok(answers.length >= 200);
      answers.forEach((answer, i) => assert.deepEqual(answer, { status: 200, result: { ret: i % 2 === 0 } }));
      await assertExitsSoon(server, signalledAt);
      assert.ok(refused !== undefined, 'the new stream was sent during the drain delay');
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(((await refused.json()) as { detail: string }).detail, /shutting down and takes no new stream/);
      // What the drain answers on purpose is not an error: no line of the drain is at level error (50) or above.
      const errors = server
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{') && (JSON.parse(text) as { level: number }).level >= 50);
      assert.deepEqual(errors, []);
    });

    test('on the wire (node:http): the last line is the 503 problem, the response ends whole, the count matches the lines before it', async (t) => {
      const server = await startServer(t, { ...ENV, WORKERS: workers });
      const sent = request(`${server.base}/api/stream`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } });
      sent.on('error', () => {}); // the service stops reading: the rest of the upload may be refused
      let sending = true;
      void (async () => {
        for (let i = 0; sending; i++) {
          if (!sent.write(line(i))) await Promise.race([once(sent, 'drain'), sleep(200)]);
          if (i % 20 === 19) await sleep(10);
        }
      })();
      const [response] = (await once(sent, 'response')) as [import('node:http').IncomingMessage];
      assert.equal(response.statusCode, 200);
      let text = '';
      let signalledAt = 0;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (signalledAt === 0 && text.split('\n').length > 100) {
          signalledAt = Date.now();
          server.child.kill('SIGTERM');
        }
      });
      await once(response, 'end');
      sending = false;
      assert.equal(response.complete, true, 'the response ended with its last chunk');
      const lines = text.trimEnd().split('\n');
      const last = JSON.parse(lines.pop() as string) as { status: number; problem: { status: number; answered: number; retryAfter: number } };
      assert.equal(last.status, 503);
      assert.equal(last.problem.status, 503);
      assert.equal(last.problem.answered, lines.length);
      assert.equal(last.problem.retryAfter, 1);
      lines.forEach((answer, i) => assert.equal(answer, `{"status":200,"result":{"ret":${i % 2 === 0}}}`));
      sent.destroy();
      await assertExitsSoon(server, signalledAt);
    });
  });
}

test('json-utility isEven --lines --url: says on standard error where the service stopped and exits 1', async (t) => {
  const server = await startServer(t, ENV);
  const cli = spawn(process.execPath, [new URL('../dist/cli.js', import.meta.url).pathname, 'isEven', '--lines', '--url', server.base], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => cli.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  cli.stdout.on('data', (chunk) => (stdout += chunk));
  cli.stderr.on('data', (chunk) => (stderr += chunk));
  cli.stdin.on('error', () => {});
  let feeding = true;
  void (async () => {
    for (let i = 0; feeding && !cli.stdin.destroyed; i++) {
      cli.stdin.write(`${i}\n`);
      if (i % 20 === 19) await sleep(10);
    }
  })();
  const deadline = Date.now() + 10_000;
  while (stdout.split('\n').length < 100) {
    assert.ok(Date.now() < deadline, `no answers: ${stderr}`);
    await sleep(20);
  }
  server.child.kill('SIGTERM');
  const [code] = (await once(cli, 'exit')) as [number | null];
  feeding = false;
  assert.equal(code, 1, stderr);
  const answered = stdout.trimEnd().split('\n');
  assert.match(stderr, new RegExp(`shut down after answering ${answered.length} lines; lines ${answered.length + 1} on were not answered`));
  answered.forEach((answer, i) => assert.equal(answer, `{"status":200,"result":{"ret":${i % 2 === 0}}}`));
  assert.equal(await server.exited, 0);
});
