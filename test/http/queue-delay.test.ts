import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
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
