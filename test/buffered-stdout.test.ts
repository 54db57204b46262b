import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { LOG_BUFFER_BYTES } from '../src/buffered-stdout.js';

const MODULE = new URL('../src/buffered-stdout.ts', import.meta.url).href;

/**
 * Runs `script` in a child with pino logging to `bufferedStdout(10_000, backlogBytes)` as `logger`;
 * its stdout as it arrives, read from the start unless `readStdout` is false (then call `readStdout()`).
 */
function run(script: string, { backlogBytes = 8 * 1024 * 1024, readStdout = true } = {}) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import pino from 'pino'; import { bufferedStdout, droppedLogLines } from ${JSON.stringify(MODULE)}; const logger = pino({ base: null, timestamp: false }, bufferedStdout(10_000, ${backlogBytes})); ${script}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: new URL('..', import.meta.url) },
  );
  let stdout = '';
  let stderr = '';
  const read = () => child.stdout.on('data', (chunk) => (stdout += chunk));
  if (readStdout) read();
  child.stderr.on('data', (chunk) => (stderr += chunk));
  // 'close', not 'exit': by then all of stdout has been read.
  const exited = once(child, 'close').then(([code]) => code as number | null);
  return { output: () => stdout, errors: () => stderr, readStdout: read, exited, kill: () => child.kill('SIGKILL') };
}

const lines = (text: string): number => text.split('\n').filter((line) => line.includes('"msg":"line ')).length;

test('buffered stdout: lines are written once they fill the buffer, long before the flush interval', async (t) => {
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

test('buffered stdout: lines still in the buffer are written when the process dies of an uncaught exception', async (t) => {
  const child = run(`for (let i = 0; i < 3; i++) logger.info('line ' + i); setTimeout(() => { throw new Error('boom'); }, 50);`);
  t.after(child.kill);
  assert.equal(await child.exited, 1);
  assert.equal(lines(child.output()), 3);
});

test('buffered stdout: lines still in the buffer are written when the process ends because nothing is left to do', async (t) => {
  const child = run(`for (let i = 0; i < 3; i++) logger.info('line ' + i);`);
  t.after(child.kill);
  assert.equal(await child.exited, 0);
  assert.equal(lines(child.output()), 3);
});

test('buffered stdout: when standard output is not read, at most LOG_BACKLOG_BYTES waits; what comes beyond is dropped and counted, nothing else is lost', async (t) => {
  const backlogBytes = 1024 * 1024;
  // About 75 characters a line: three times the backlog in all, 1,000 lines per event-loop turn.
  const count = 40_000;
  const child = run(
    `let i = 0;
     const more = () => {
       for (const end = i + 1000; i < end; i++) logger.info('line ' + String(i).padStart(5, '0') + ' ' + 'x'.repeat(50));
       if (i < ${count}) setImmediate(more);
       else setTimeout(() => { process.stderr.write('dropped ' + droppedLogLines() + '\\n'); setTimeout(() => {}, 20_000); }, 300);
     };
     more();`,
    { backlogBytes, readStdout: false },
  );
  t.after(child.kill);
  const deadline = Date.now() + 20_000;
  while (!/dropped \d+\n/.test(child.errors()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const dropped = Number(/dropped (\d+)\n/.exec(child.errors())?.[1]);
  const lineBytes = 75;
  // What was kept: the backlog, plus what the pipe (64 KiB on Linux) and this process's stream buffer took, plus one hand-over.
  assert.ok(dropped > 0, `${dropped} lines dropped (stderr: ${child.errors()})`);
  assert.ok((count - dropped) * lineBytes <= backlogBytes + 512 * 1024, `${count - dropped} lines kept of ${count}`);
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
