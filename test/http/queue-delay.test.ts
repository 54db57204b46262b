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
  const aAt = performance.now();
  assert.equal(interval.ms(), 0, 'the first of them found the queue idle');
  await sleep(20);
  const bAt = performance.now();
  b();
  await sleep(20);
  const cAt = performance.now();
  c();
  // The intervals as they came (timers run late on a loaded machine): the first, then a tenth of
  // the way to the second (CompletionInterval's average).
  const [first, second] = [bAt - aAt, cAt - bAt];
  const expected = first + 0.1 * (Math.min(second, 4 * first) - first);
  assert.ok(
    first >= 18 && Math.abs(interval.ms() - expected) < 1,
    `${expected.toFixed(1)} ms (intervals ${first.toFixed(1)}, ${second.toFixed(1)}), not ${interval.ms()}`,
  );
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

test('LoopDelay: how late the next tick is while a turn runs, 0 once the timers have run', async () => {
  const delay = new LoopDelay();
  await sleep(30);
  assert.ok(delay.overdueMs() < 10, `between turns: ${delay.overdueMs()}`);
  // One turn of 70 ms, read at 30 and at 60 ms into it.
  const start = performance.now();
  const during: number[] = [];
  for (let now = start; now - start < 70; now = performance.now()) {
    if (during.length < 2 && now - start >= 30 * (during.length + 1)) during.push(delay.overdueMs());
  }
  const [early = 0, late = 0] = during;
  assert.ok(early >= 10 && late >= early + 25, `grows with the turn: ${during.join(', ')}`);
  await sleep(15);
  assert.ok(delay.overdueMs() < 10, `after the turn: ${delay.overdueMs()}`);
  delay.close();
});

/** This process's threads (Linux: /proc/self/task), each with its niceness. */
function threadNiceness(): Map<string, number> {
  return new Map(
    readdirSync('/proc/self/task').map((tid) => [tid, Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16])]),
  );
}

test('the offload pool threads run at POOL_THREAD_NICENESS, the event loop at the process niceness', { skip: process.platform !== 'linux' }, async (t) => {
  const app = await build(t, { offloadBodyBytes: 16, poolThreadNiceness: 7 });
  const before = threadNiceness();
  const answer = await app.inject({ method: 'POST', url: '/api/sort', headers: { 'content-type': 'application/json' }, payload: '{"input":[3,2,1,0,5,4]}' });
  assert.equal(answer.body, '{"sortedArray":[0,1,2,3,4,5]}');
  // The threads the pool started (a worker's thread and its own helpers): its own is at 7.
  const started = [...threadNiceness()].filter(([tid]) => !before.has(tid)).map(([, niceness]) => niceness);
  assert.ok(started.includes(7), `threads started at ${started.join(', ')}`);
  assert.equal(threadNiceness().get(String(process.pid)), 0, 'the event loop keeps the process niceness');
  assert.equal(getPriority(), 0);
});
