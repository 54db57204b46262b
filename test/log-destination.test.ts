import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { test } from 'node:test';
import { spawnLoggingChild } from './logging-child.js';
import { LOG_BUFFER_BYTES } from '../src/http/observability/log-destination.js';

/**
 * Runs `script` in a child with pino logging to `logDestination(flushMs, backlogBytes)` as `logger`;
 * its stdout as it arrives, read from the start unless `readStdout` is false (then call `readStdout()`).
 */
function run(script: string, { flushMs = 10_000, backlogBytes = 8 * 1024 * 1024, readStdout = true, stdoutFd = undefined as number | undefined } = {}) {
  const child = spawnLoggingChild(script, { flushMs, backlogBytes, stdout: stdoutFd ?? 'pipe', pinoOptions: '{ base: null, timestamp: false }' });
  let stdout = '';
  let stderr = '';
  const read = () => child.stdout?.on('data', (chunk) => (stdout += chunk));
  if (readStdout) read();
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  // 'close', not 'exit': by then all of stdout has been read.
  const exited = once(child, 'close').then(([code]) => code as number | null);
  const ended = once(child, 'exit').then(([code]) => code as number | null);
  return {
    output: () => stdout,
    errors: () => stderr,
    readStdout: read,
    closeStdout: () => child.stdout?.destroy(),
    exited,
    ended,
    kill: () => child.kill('SIGKILL'),
  };
}

const lines = (text: string): number => text.split('\n').filter((line) => line.includes('"msg":"line ')).length;

test('log destination: lines are written once they fill the buffer, long before the flush interval', async (t) => {
  // Each line is about 75 characters: LOG_BUFFER_BYTES / 60 of them pass the buffer size; then the process waits.
  const count = Math.ceil(LOG_BUFFER_BYTES / 60);
  const child = run(
    `for (let i = 0; i < ${count}; i++) logger.info('line ' + String(i).padStart(4, '0') + ' ' + 'x'.repeat(50)); setTimeout(() => {}, 20_000);`,
  );
  t.after(child.kill);
  const deadline = Date.now() + 10_000;
  while (lines(child.output()) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const written = lines(child.output());
  assert.ok(written > 0 && written <= count, `${written} of ${count} lines written before the interval`);
  // Whole lines only: the buffer is handed over at line boundaries.
  assert.ok(child.output().endsWith('\n'));
});

test('log destination: lines still in the buffer are written when the process dies of an uncaught exception', async (t) => {
  const child = run(`for (let i = 0; i < 3; i++) logger.info('line ' + i); setTimeout(() => { throw new Error('boom'); }, 50);`);
  t.after(child.kill);
  assert.equal(await child.exited, 1);
  assert.equal(lines(child.output()), 3);
});

test('log destination: lines still in the buffer are written when the process ends because nothing is left to do', async (t) => {
  const child = run(`for (let i = 0; i < 3; i++) logger.info('line ' + i);`);
  t.after(child.kill);
  assert.equal(await child.exited, 0, child.errors());
  assert.equal(lines(child.output()), 3, `stdout: ${child.output()}\nstderr: ${child.errors()}`);
});

test('log destination: when standard output is not read, at most LOG_BACKLOG_BYTES waits; what comes beyond is dropped and counted, nothing else is lost', async (t) => {
  // Below LOG_BACKLOG_BYTES's lowest setting, so that the test is quick: once the pipe has been
  // full, sonic-boom writes to it again every 100 ms (it is non-blocking, as in the service).
  const backlogBytes = 256 * 1024;
  // About 75 characters a line: four times the backlog in all, 1,000 lines per event-loop turn.
  const count = 14_000;
  const child = run(
    `let i = 0;
     const more = () => {
       for (const end = i + 1000; i < end; i++) logger.info('line ' + String(i).padStart(5, '0') + ' ' + 'x'.repeat(50));
       if (i < ${count}) setImmediate(more);
       else setTimeout(() => { process.stderr.write('dropped ' + droppedLogLines() + '\\n'); setTimeout(() => {}, 20_000); }, 300);
     };
     more();`,
    // The last lines are handed over by the interval, not the size threshold.
    { flushMs: 100, backlogBytes, readStdout: false },
  );
  t.after(child.kill);
  const deadline = Date.now() + 20_000;
  while (!/dropped \d+\n/.test(child.errors()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const dropped = Number(/dropped (\d+)\n/.exec(child.errors())?.[1]);
  const lineBytes = 75;
  // What was kept: the backlog, plus what the pipe (64 KiB on Linux) and this process's stream buffer took, plus one hand-over.
  assert.ok(dropped > 0, `${dropped} lines dropped (stderr: ${child.errors()})`);
  assert.ok((count - dropped) * lineBytes <= backlogBytes + 256 * 1024, `${count - dropped} lines kept of ${count}`);
  // Once standard output is read again, every line that was not dropped arrives, whole. (The
  // child stays up: a hand-over still being written when a process exits is lost, see README.)
  child.readStdout();
  while (lines(child.output()) < count - dropped && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(lines(child.output()), count - dropped);
  assert.ok(
    child
      .output()
      .split('\n')
      .every((line) => line === '' || line.endsWith('"}')),
  );
});

/** A child's script line: 3,000 log lines of about 75 bytes (225 KB). */
const LOG_3000_LINES = `for (let i = 0; i < 3000; i++) logger.info('line ' + String(i).padStart(5, '0') + ' ' + 'x'.repeat(50));`;

test('log destination: a process whose standard output nobody reads still exits, about a second after process.exit()', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'buffered-stdout-'));
  const fifo = join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  // Opened for reading and writing, so that opening it waits for no reader; nothing reads it.
  const fd = openSync(fifo, 'r+');
  t.after(() => (closeSync(fd), rmSync(dir, { recursive: true })));
  // 225 KB of lines: more than the pipe holds (64 KiB on Linux).
  const child = run(
    `${LOG_3000_LINES}
     setTimeout(() => process.exit(0), 200);`,
    { stdoutFd: fd },
  );
  t.after(child.kill);
  const started = Date.now();
  const code = await Promise.race([child.ended, new Promise((resolve) => setTimeout(() => resolve('still running after 10 s'), 10_000))]);
  assert.equal(code, 0);
  assert.ok(Date.now() - started < 5_000, `exited after ${Date.now() - started} ms`);
  // Quietly: the write given up is not an error thrown from the exit handler.
  assert.equal(child.errors(), '');
});

test(
  'log destination: a closed standard output (EPIPE) does not end the process; every line it could not take, held or given after, is counted as dropped',
  { timeout: 20_000 },
  async (t) => {
    // 3,000 lines (225 KB, three hand-overs and some) before the failure is known, 3,000 after;
    // none of them reaches standard output.
    const child = run(
      `setTimeout(() => {
       ${LOG_3000_LINES}
       setTimeout(() => {
         ${LOG_3000_LINES}
         process.stderr.write('dropped ' + droppedLogLines() + '\\n');
         process.exit(0);
       }, 300);
     }, 300);`,
      { readStdout: false },
    );
    t.after(child.kill);
    // Nothing will ever read the child's standard output again.
    child.closeStdout();
    assert.equal(await child.ended, 0);
    // The lines held when the failure was found are counted with those given after it.
    assert.equal(child.errors(), 'dropped 6000\n');
  },
);
