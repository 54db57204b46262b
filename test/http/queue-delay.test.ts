import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from './helper.js';
import { CompletionInterval, LoopDelay } from '../../src/http/protocol/queue-delay.js';

test('CompletionInterval: tasks that found the queue idle say nothing of its rate; queued ones give the interval between completions', async () => {
  const interval = new CompletionInterval();
  const alone = interval.started();
  await sleep(30);
  alone();
  assert.equal(interval.ms(), 0, 'a task alone: no rate yet');
  // Three tasks queued at once, finishing 20 ms apart, as one thread answers them.
  const [a, b, c] = [interval.started(), interval.started(), interval.started()];
  await sleep(20);
  a();
  assert.equal(interval.ms(), 0, 'the first of them found the queue idle');
  await sleep(20);
  b();
  await sleep(20);
  c();
  assert.ok(interval.ms() >= 18 && interval.ms() < 40, `about 20 ms, not ${interval.ms()}`);
});

test('LoopDelay: a loop late at every turn is delayed; one long turn is not', async () => {
  const delay = new LoopDelay();
  await sleep(50);
  assert.ok(delay.ms() < 10, `idle: ${delay.ms()}`);
  let until = Date.now() + 100;
  while (Date.now() < until);
  await sleep(15);
  assert.ok(delay.ms() < 10, `after one long turn: ${delay.ms()}`);
  const overload = setInterval(() => {
    until = Date.now() + 30;
    while (Date.now() < until);
  }, 1);
  await sleep(300);
  clearInterval(overload);
  assert.ok(delay.ms() >= 15, `late at every turn: ${delay.ms()}`);
  delay.close();
});

/** The niceness of each of this process's threads whose name starts with `prefix` (Linux: /proc/self/task). */
function nicenessOf(prefix: string): number[] {
  return readdirSync('/proc/self/task')
    .filter((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith(prefix))
    .map((tid) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]));
}

test('the offload pool threads run at POOL_THREAD_NICENESS, the event loop at the process niceness', { skip: process.platform !== 'linux' }, async (t) => {
  const app = await build(t, { offloadBodyBytes: 16, poolThreadNiceness: 7 });
  const before = nicenessOf('WorkerThread').length;
  const answer = await app.inject({ method: 'POST', url: '/api/sort', headers: { 'content-type': 'application/json' }, payload: '{"input":[3,2,1,0,5,4]}' });
  assert.equal(answer.body, '{"sortedArray":[0,1,2,3,4,5]}');
  const threads = nicenessOf('WorkerThread');
  assert.ok(threads.length > before, 'the pool started a thread');
  assert.ok(threads.includes(7), `pool threads at ${threads.join(', ')}`);
  assert.equal(getPriority(), 0);
});
