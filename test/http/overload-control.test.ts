import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build, busyEveryTurn } from './helper.js';
import { LoopLateness, NewCallers, StandingQueue } from '../../src/http/protocol/overload-control.js';

test('StandingQueue: a wait past the target is no overload until every wait has been past it for an interval; then what waits past the target is refused, until every wait has been at most it for an interval', () => {
  const queue = new StandingQueue(50);
  assert.equal(queue.refuses(80, 0), false, 'the first wait over the target: a burst so far');
  assert.equal(queue.refuses(80, 60), false, 'over it for 60 ms');
  assert.equal(queue.refuses(80, 100), true, 'over it for an interval (100 ms): standing');
  assert.equal(queue.refuses(40, 120), false, 'a wait under the target is admitted');
  assert.equal(queue.refuses(60, 150), true, 'still standing: under it for 30 ms only');
  assert.equal(queue.refuses(50, 160), false);
  assert.equal(queue.refuses(30, 259), false);
  assert.equal(queue.refuses(30, 260), false, 'at most the target for an interval: standing ends');
  assert.equal(queue.refuses(80, 270), false, 'a new count starts');
  assert.equal(queue.refuses(80, 369), false);
  assert.equal(queue.refuses(80, 370), true);
  // An interval with no request says nothing of the queue in it.
  assert.equal(queue.refuses(80, 500), false, 'after a gap: counted again');
  assert.equal(queue.refuses(80, 600), true);
});

test('StandingQueue: a second wait in a row over the target by more than an interval stands at once, since every wait for the next interval will be over the target', () => {
  const queue = new StandingQueue(50);
  assert.equal(queue.refuses(1000, 0), false, 'the first wait over the target, however long: one long job ahead');
  assert.equal(queue.refuses(150, 1), false, 'over the target by the interval exactly: a burst so far');
  assert.equal(queue.refuses(151, 2), true, 'over it by more, in a row: standing at once');
  assert.equal(queue.refuses(60, 3), true, 'and what waits past the target is refused while it stands');
  assert.equal(queue.refuses(50, 4), false);
  assert.equal(queue.refuses(50, 104), false, 'at most the target for an interval: standing ends');
  assert.equal(queue.refuses(1000, 105), false, 'a new count starts');
  assert.equal(queue.refuses(40, 106), false);
  assert.equal(queue.refuses(1000, 107), false, 'a wait under the target between them: each long wait is the first of its run');
});

test('LoopLateness: arms one 1 ms timer as a request arrives, none while nothing does; its lateness and the turn running now', async () => {
  await sleep(1); // the loop has started: its utilization is measured from then
  const loop = new LoopLateness();
  assert.equal(loop.lastMs, 0);
  // A turn of 60 ms after a request arms the sample: read during it, the overdue time grows.
  const start = performance.now();
  loop.ms(start);
  let until = Date.now() + 60;
  while (Date.now() < until);
  assert.ok(loop.ms(performance.now()) >= 50, 'the turn running now');
  await sleep(5);
  assert.ok(loop.lastMs >= 50, `the sample that ran late: ${loop.lastMs}`);
  // Nothing arrives: no timer runs, the last sample stays as it was.
  const last = loop.lastMs;
  until = Date.now() + 30;
  while (Date.now() < until);
  await sleep(5);
  assert.equal(loop.lastMs, last);
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

test('NewCallers: callers come and go while at least a tenth of the last two intervals’ requests came on connections of their own', () => {
  const callers = new NewCallers();
  assert.equal(callers.arrived(true, 0), true);
  for (let at = 1; at < 9; at++) assert.equal(callers.arrived(false, at), true, `1 new of ${at + 1}`);
  assert.equal(callers.arrived(false, 9), true, '1 new of 10');
  assert.equal(callers.arrived(false, 10), false, '1 new of 11: a closed loop');
  // The next interval counts with this one; the one after, without it.
  assert.equal(callers.arrived(true, 100), true, '2 new of 12');
  for (let at = 101; at < 120; at++) callers.arrived(false, at);
  assert.equal(callers.arrived(false, 120), false, '2 new of 32');
  assert.equal(callers.arrived(false, 200), false, '1 new of 22, the first interval gone');
  assert.equal(callers.arrived(true, 450), true, 'after a gap, the counts start again');
});

// A body worth refusing: 4 KiB or more (REFUSABLE_BODY_BYTES), answered on the event loop.
const SORT_BODY = JSON.stringify({ input: Array.from({ length: 1000 }, (_, i) => (i * 7919) % 10_007) });
const sortOf = (app: Awaited<ReturnType<typeof build>>) =>
  app.inject({ method: 'POST', url: '/api/sort', headers: { 'content-type': 'application/json' }, payload: SORT_BODY });

/** POST /api/sort of `SORT_BODY` on one kept-alive connection of `agent`: the status and how long the answer took. */
async function ask(port: number, agent: Agent): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { port, host: '127.0.0.1', method: 'POST', path: '/api/sort', headers: { 'content-type': 'application/json' }, agent },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - start }));
      },
    );
    request.on('error', reject);
    request.end(SORT_BODY);
  });
}

/**
 * Four kept-alive connections, opened and then quiet for two intervals, asking in a closed loop for
 * 600 ms while turns of 35 ms keep the loop late: past the target (20 ms), and short enough that the
 * loop's requests come within an interval of each other, so the queue they see stands (with turns of
 * 60 ms it never did, and rule 3 went untested). `alongside` runs meanwhile, until the loop ends.
 */
async function closedLoopBehindLateLoop(t: TestContext, alongside?: (app: Awaited<ReturnType<typeof build>>, running: () => boolean) => Promise<void>) {
  const app = await build(t, { overloadTargetMs: 20 });
  const port = await listen(app);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  t.after(() => agent.destroy());
  await Promise.all([1, 2, 3, 4].map(() => ask(port, agent)));
  await sleep(250);
  const stop = busyEveryTurn(35);
  t.after(stop);
  let running = true;
  const beside = alongside?.(app, () => running);
  const statuses: number[] = [];
  for (const until = performance.now() + 600; performance.now() < until;) {
    statuses.push(...(await Promise.all([1, 2, 3, 4].map(async () => (await ask(port, agent)).status))));
  }
  running = false;
  await beside;
  stop();
  assert.ok(statuses.length >= 8 && statuses.every((status) => status === 200), statuses.join(', '));
  assert.match((await app.inject({ method: 'GET', url: '/metrics' })).body, /^overload_refusals_total\{signal="loop"\} 0$/m);
}

test('a closed loop of kept-alive connections is never refused, however late the loop: its queue cannot grow past its number', async (t) => {
  await closedLoopBehindLateLoop(t);
});

test('probes, /metrics, the docs and what is never refused never feed its state: coming on connections of their own, they open no closed loop to refusal', async (t) => {
  // Each inject is a connection of its own: counted, they would be about a fifth of the requests, past the tenth that opens rule 3.
  const others = ['/healthz', '/readyz', '/metrics', '/api/openapi.json', '/api/isEven/4'];
  await closedLoopBehindLateLoop(t, async (app, running) => {
    for (let i = 0; running(); i++) await Promise.all([app.inject({ method: 'GET', url: others[i % others.length] as string }), sleep(5)]);
  });
});

test('while callers come and go, a kept-alive connection refused before gets its next refusal only after the target', async (t) => {
  const app = await build(t, { overloadTargetMs: 30 });
  const port = await listen(app);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const stop = busyEveryTurn(80);
  t.after(stop);
  // New callers (each inject is a connection of its own) keep the queue judged.
  let calling = true;
  const callers = (async () => {
    while (calling) await Promise.all([sortOf(app), sleep(10)]);
  })();
  const answers: { status: number; ms: number }[] = [];
  for (const until = performance.now() + 1500; performance.now() < until && answers.filter((a) => a.status === 503).length < 3;)
    answers.push(await ask(port, agent));
  calling = false;
  await callers;
  stop();
  const refusals = answers.filter((answer) => answer.status === 503);
  assert.ok(refusals.length >= 2, answers.map((answer) => answer.status).join(', '));
  const again = answers.findIndex((answer, i) => i > 0 && answer.status === 503 && answers[i - 1]?.status === 503);
  assert.ok(again > 0, `two refusals in a row: ${answers.map((answer) => answer.status).join(', ')}`);
  assert.ok((answers[again]?.ms ?? 0) >= 30, `the second after the target: ${answers[again]?.ms} ms`);
});

test('the pool: bodies it takes are refused once its queue has stood past the target for an interval, counted as signal="pool"', async (t) => {
  const app = await build(t, { overloadTargetMs: 20, offloadBodyBytes: 16 });
  const payload = JSON.stringify({ input: Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 100_003) });
  const sort = () => app.inject({ method: 'POST', url: '/api/sort', headers: { 'content-type': 'application/json' }, payload });
  // The pool's rate is known once bodies have queued in it.
  await Promise.all([sort(), sort(), sort(), sort()]);
  const answers: Promise<number>[] = [];
  for (let i = 0; i < 40; i++) {
    answers.push(sort().then((answer) => answer.statusCode));
    await sleep(10);
  }
  const statuses = await Promise.all(answers);
  assert.ok(statuses.includes(200) && statuses.includes(503), statuses.join(', '));
  assert.match((await app.inject({ method: 'GET', url: '/metrics' })).body, /^overload_refusals_total\{signal="pool"\} [1-9]\d*$/m);
});

test('what refusing would save little of is never refused: a GET, a body under 4 KiB, while a standing queue refuses larger bodies', async (t) => {
  const app = await build(t, { overloadTargetMs: 20 });
  const stop = busyEveryTurn(60);
  t.after(stop);
  const small = {
    method: 'POST',
    url: '/api/sort',
    headers: { 'content-type': 'application/json' },
    payload: SORT_BODY.slice(0, 3000).replace(/,\d*$/, ']}'),
  } as const;
  // An open load, each inject a connection of its own.
  const asked: Record<'get' | 'small' | 'sort', Promise<number>[]> = { get: [], small: [], sort: [] };
  const status = async (answer: Promise<{ statusCode: number }>) => (await answer).statusCode;
  for (const until = performance.now() + 500; performance.now() < until; await sleep(20)) {
    asked.sort.push(status(sortOf(app)));
    asked.get.push(status(app.inject({ method: 'GET', url: '/api/isEven/2' })));
    asked.small.push(status(app.inject(small)));
  }
  const statuses = { sort: await Promise.all(asked.sort), get: await Promise.all(asked.get), small: await Promise.all(asked.small) };
  stop();
  assert.ok(statuses.sort.includes(503), `the sort of 4.8 KiB: ${statuses.sort.join(', ')}`);
  assert.ok(
    [...statuses.get, ...statuses.small].every((status) => status === 200),
    JSON.stringify(statuses),
  );
});

test('the 4 KiB edge over real sockets: a body of 4,095 bytes is answered while a standing queue refuses one of 4,096', async (t) => {
  const app = await build(t, { overloadTargetMs: 20 });
  const port = await listen(app);
  // The same sort, padded with JSON's whitespace to the byte.
  const bodyOf = (bytes: number): string => '{"input":[3,1,2]}'.padEnd(bytes, ' ');
  // Each request on a connection of its own: callers that come and go.
  const send = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const ask = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/api/sort', agent: false, headers: { 'content-type': 'application/json' } });
      ask.on('response', (response) => response.resume().on('end', () => resolve(response.statusCode ?? 0)));
      ask.on('error', reject);
      ask.end(body);
    });
  // Turns of 35 ms, past the target; Node accepts one connection a turn, so the larger bodies
  // arrive every other turn, within an interval of each other, and the queue they see stands.
  const stop = busyEveryTurn(35);
  t.after(stop);
  const asked: Record<4095 | 4096, Promise<number>[]> = { 4095: [], 4096: [] };
  for (const until = performance.now() + 800; performance.now() < until; await sleep(10)) {
    for (const bytes of [4095, 4096] as const) asked[bytes].push(send(bodyOf(bytes)));
  }
  const [under, at] = [await Promise.all(asked[4095]), await Promise.all(asked[4096])];
  stop();
  assert.ok(
    under.every((status) => status === 200),
    `4,095 bytes: ${under.join(', ')}`,
  );
  assert.ok(at.includes(503), `4,096 bytes: ${at.join(', ')}`);
});

async function listen(app: Awaited<ReturnType<typeof build>>): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}
