import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { LOG_BUFFER_BYTES } from '../src/buffered-stdout.js';

const MODULE = new URL('../src/buffered-stdout.ts', import.meta.url).href;

/** Runs `script` in a child with pino logging to `bufferedStdout(10_000)` as `logger`; stdout as it arrives. */
function run(script: string) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import pino from 'pino'; import { bufferedStdout } from ${JSON.stringify(MODULE)}; const logger = pino({ base: null, timestamp: false }, bufferedStdout(10_000)); ${script}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: new URL('..', import.meta.url) },
  );
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.resume();
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { output: () => stdout, exited, kill: () => child.kill('SIGKILL') };
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
