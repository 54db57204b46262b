import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { workersWarning } from '../src/server/listen.js';
import { duplicateKeys } from './json-keys.js';
import { startServer } from './process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
function workersOf(pid: number): number[] {
  try {
    const children = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    return children.filter((line) => line.includes('main.js')).map((line) => Number.parseInt(line, 10));
  } catch {
    return []; // ps exits 1 when it finds none
  }
}

/** The socket inodes a process holds open (Linux: /proc/<pid>/fd links read `socket:[inode]`). */
function socketsOf(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // closed while listed
    }
  }
  return inodes;
}

/** The inode of the socket listening on a TCP port (/proc/net/tcp: state 0A is LISTEN). */
function listeningSocket(port: number): string | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A') return fields[9];
  }
  return undefined;
}

test('WORKERS=2: two processes serve one port, metrics add up across them, a killed worker is replaced, SIGTERM drains all', async (t) => {
  const server = await startServer(t, { WORKERS: '2', DRAIN_DELAY_MS: '0' });
  assert.match(server.output(), /listening on http:\/\/127\.0\.0\.1:\d+ \(2 workers\)/);
  const primary = server.child.pid as number;
  const workers = workersOf(primary);
  assert.equal(workers.length, 2);
  // Each worker accepts from the listening socket itself (cluster.SCHED_NONE), so that past capacity
  // the queue is where each worker's overload control sees it, not in a primary handing connections on.
  const listener = listeningSocket(server.port);
  assert.ok(listener !== undefined);
  for (const worker of workers) assert.ok(socketsOf(worker).has(listener), `worker ${worker} does not hold the listening socket`);

  // Fresh connections each time: whichever worker accepts each, the metrics count all of them.
  for (let i = 0; i < 10; i++) {
    const response = await fetch(`${server.base}/api/isEven/${i}`, { headers: { connection: 'close' } });
    assert.deepEqual(await response.json(), { ret: i % 2 === 0 });
  }
  const metrics = await (await fetch(`${server.base}/metrics`, { headers: { connection: 'close' } })).text();
  assert.match(metrics, /^http_requests_total\{method="GET",route="\/api\/isEven\/:number",status="200"\} 10$/m);
  // One setting, not the workers' sum; the longest wait of any worker.
  assert.match(metrics, /^overload_target_seconds 0\.05$/m);
  assert.match(metrics, /^overload_queue_delay_seconds \d/m);

  process.kill(workers[0] as number, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  // The primary logs it on standard output, a JSON line like every other.
  while (!/"msg":"worker died; starting another"/.test(server.output()) || workersOf(primary).length < 2) {
    assert.ok(Date.now() < deadline, `no replacement:\n${server.output()}\n${server.errors()}`);
    await sleep(50);
  }
  const died = server
    .output()
    .split('\n')
    .find((line) => line.includes('"msg":"worker died; starting another"')) as string;
  // The line's pid is the primary's; the dead worker's has a key of its own.
  assert.deepEqual(duplicateKeys(died), []);
  const { pid, workerPid } = JSON.parse(died) as { pid: number; workerPid: number };
  assert.deepEqual([pid, workerPid], [primary, workers[0]]);
  const replaced = workersOf(primary);
  assert.equal(replaced.length, 2);
  assert.ok(!replaced.includes(workers[0] as number));
  await sleep(1000); // the new worker starts listening
  for (let i = 0; i < 4; i++) assert.equal((await fetch(`${server.base}/healthz`, { headers: { connection: 'close' } })).status, 200);

  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0, server.errors());
  assert.deepEqual(workersOf(primary), []);
});

test('WORKERS=2: SIGTERM while a replacement worker is still starting stops it and still exits 0', async (t) => {
  const server = await startServer(t, { WORKERS: '2', DRAIN_DELAY_MS: '0' });
  const primary = server.child.pid as number;
  process.kill(workersOf(primary)[0] as number, 'SIGKILL');
  const deadline = Date.now() + 10_000;
  while (workersOf(primary).length < 2) {
    assert.ok(Date.now() < deadline, 'no replacement');
    await sleep(10);
  }
  server.child.kill('SIGTERM'); // the replacement is still loading its modules
  assert.equal(await server.exited, 0, server.errors());
  assert.deepEqual(workersOf(primary), []);
});

test('WORKERS above the CPUs the process may run on: one warn line says they share them; at or under, none', async (t) => {
  assert.equal(workersWarning(2, 2), undefined);
  assert.equal(workersWarning(1, 1), undefined);
  const workers = availableParallelism() + 1;
  const server = await startServer(t, { WORKERS: String(workers), DRAIN_DELAY_MS: '0' });
  const deadline = Date.now() + 5_000;
  while (!server.output().includes('"level":40')) {
    assert.ok(Date.now() < deadline, `no warning:\n${server.output()}`);
    await sleep(25);
  }
  const warnings = server
    .output()
    .split('\n')
    .filter((line) => line.includes('"level":40'))
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
  const cpus = availableParallelism();
  assert.deepEqual(warnings, [
    `WORKERS=${workers} is more than the ${cpus} CPU${cpus === 1 ? '' : 's'} this process may run on: the workers share ${cpus === 1 ? 'it' : 'them'}, ` +
      "each request waits behind the other workers' work too, and overload control (OVERLOAD_TARGET_MS) refuses at a lower load; WORKERS=auto runs one a CPU",
  ]);
});
