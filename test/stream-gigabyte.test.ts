import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { startServer } from './process.js';

// Issue 27: a stream's memory stays bounded whatever its length. At least 1 GiB of lines goes
// through the built service started with MEMORY_LIMIT=256MiB; every answer is checked, and the
// service's peak RSS (VmHWM, Linux /proc) stays within the limit.

const MIB = 1024 * 1024;
const ROOT = new URL('..', import.meta.url).pathname;
const LINE_CHARS = 60 * 1024; // under STREAM_MAX_LINE_BYTES
const TOTAL_BYTES = 1024 * MIB;

/** An isNumber line of LINE_CHARS bytes: a number (or not) in a sea of spaces, which isNumber trims. */
function line(numeric: boolean): Buffer {
  const head = `{"operation":"isNumber","input":"${numeric ? '12e3' : 'x12'}`;
  const tail = '"}\n';
  return Buffer.from(head + ' '.repeat(LINE_CHARS - head.length - tail.length) + tail);
}

before(async () => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
});

test('1 GiB of lines streams through a service with MEMORY_LIMIT=256MiB: every answer right, peak RSS within the limit', { timeout: 180_000 }, async (t) => {
  const server = await startServer(t, { MEMORY_LIMIT: '256MiB', LOG_LEVEL: 'warn' });
  const pid = server.child.pid as number;
  const lines = [line(false), line(true)];
  const count = Math.ceil(TOTAL_BYTES / LINE_CHARS);
  const expected = ['{"status":200,"result":{"ret":false}}', '{"status":200,"result":{"ret":true}}'];
  const numericAt = (i: number): number => (i % 3 === 0 ? 0 : 1);

  const answered = await new Promise<number>((resolve, reject) => {
    const sent = request(`${server.base}/api/stream`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } });
    sent.on('error', reject);
    sent.on('response', (response) => {
      assert.equal(response.statusCode, 200);
      let seen = 0;
      const answers = createInterface({ input: response, crlfDelay: Infinity });
      answers.on('line', (answer) => {
        if (answer !== expected[numericAt(seen)]) return reject(new Error(`line ${seen}: ${answer.slice(0, 300)}`));
        seen++;
      });
      answers.on('close', () => resolve(seen));
      response.on('error', reject);
    });
    void (async () => {
      for (let i = 0; i < count; i++) {
        if (!sent.write(lines[numericAt(i)])) await new Promise((drained) => sent.once('drain', drained));
      }
      sent.end();
    })();
  });

  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const peak = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
  t.diagnostic(`${count} lines, ${((count * LINE_CHARS) / MIB).toFixed(0)} MiB streamed; peak RSS ${(peak / MIB).toFixed(0)} MiB of 256`);
  assert.equal(answered, count);
  assert.ok(count * LINE_CHARS >= TOTAL_BYTES);
  assert.ok(peak <= 256 * MIB, `peak RSS ${(peak / MIB).toFixed(0)} MiB`);
});
