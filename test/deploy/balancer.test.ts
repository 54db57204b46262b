import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { installed } from '../../bench/load.js';
import { START_FLAGS } from '../../scripts/start-flags.js';
import { freePort, ROOT, waitForHttp } from './tools.js';

// A rolling restart behind a real load balancer loses no request: two instances behind haproxy,
// which health-checks /readyz on the admin port, under wrk's keep-alive load; each instance in
// turn gets SIGTERM and is replaced on its port. haproxy retries nothing (`retries 0`), so a
// request cut by the drain would reach wrk as an error or a 5xx; wrk counts them.

const missing = ['haproxy', 'wrk'].filter((tool) => !installed(tool));
if (missing.length > 0) process.stdout.write(`# SKIPPED: the load-balancer test needs ${missing.join(' and ')} (scripts/ensure-deploy-tools.sh)\n`);
const log = (line: string) => process.stdout.write(`# ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const DRAIN_DELAY_MS = 2000;

interface Instance {
  child: ChildProcess;
  exited: Promise<number | null>;
}

async function startInstance(t: TestContext, workers: string, port: number, adminPort: number): Promise<Instance> {
  const child = spawn(process.execPath, [...START_FLAGS, join(ROOT, 'dist/main.js')], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      WORKERS: workers,
      DRAIN_DELAY_MS: String(DRAIN_DELAY_MS),
      SHUTDOWN_TIMEOUT_MS: '20000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  t.after(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // gone already
    }
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  // Ready, not only answering: a cluster's primary answers 503 until its workers listen.
  const deadline = Date.now() + 30_000;
  while ((await waitForHttp(`http://127.0.0.1:${adminPort}/readyz`, 30_000)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`the instance on ${port} was not ready in 30 s`);
    await sleep(100);
  }
  return { child, exited };
}

/** haproxy's configuration: the service's probe as its health check, nothing retried. */
function haproxyConfig(front: number, stats: number, servers: Array<{ port: number; adminPort: number }>): string {
  return `global
  maxconn 2000
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  retries 0
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 1s fall 1 rise 2
frontend api
  bind 127.0.0.1:${front}
  default_backend service
frontend stats
  bind 127.0.0.1:${stats}
  stats enable
  stats uri /stats
backend service
  balance roundrobin
  http-reuse always
${servers.map((s, i) => `  server s${i} 127.0.0.1:${s.port} check port ${s.adminPort}`).join('\n')}
`;
}

/** Waits until haproxy's own state (its stats page, CSV) has every server of the backend UP. */
async function allUp(stats: number, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
    const up = csv.split('\n').filter((line) => /^service,s\d+,/.test(line) && line.split(',')[17] === 'UP').length;
    if (up === count) return;
    if (Date.now() > deadline) throw new Error(`haproxy has ${up} of ${count} servers up:\n${csv}`);
    await sleep(100);
  }
}

/** wrk's totals: requests, and every failure it counts (socket errors and non-2xx/3xx answers). */
function wrkCounts(output: string): { requests: number; failed: number } {
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  const failed = (socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0)) + non2xx;
  return { requests, failed };
}

describe('a rolling restart behind haproxy', { skip: missing.length > 0 ? `needs ${missing.join(', ')}` : false, timeout: 300_000 }, () => {
  for (const workers of ['1', '2']) {
    test(`WORKERS=${workers}: each instance restarted in turn under keep-alive load, 0 failed requests`, async (t) => {
      const servers = [
        { port: await freePort(), adminPort: await freePort() },
        { port: await freePort(), adminPort: await freePort() },
      ];
      const instances = await Promise.all(servers.map((s) => startInstance(t, workers, s.port, s.adminPort)));
      const [front, stats] = [await freePort(), await freePort()];
      const work = mkdtempSync(join(tmpdir(), 'haproxy-'));
      t.after(() => rmSync(work, { recursive: true, force: true }));
      writeFileSync(join(work, 'haproxy.cfg'), haproxyConfig(front, stats, servers));
      const haproxy = spawn('haproxy', ['-db', '-f', join(work, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
      let haproxyLog = '';
      haproxy.stderr.on('data', (chunk: Buffer) => (haproxyLog += chunk.toString()));
      t.after(() => haproxy.kill('SIGKILL'));
      await waitForHttp(`http://127.0.0.1:${stats}/stats`);
      await allUp(stats, servers.length);

      // Load until both restarts are done: wrk stops on SIGINT and prints its counts.
      const wrk = spawn('wrk', ['-t2', '-c32', '-d120s', `http://127.0.0.1:${front}/api/isOdd/7`], { stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      wrk.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const wrkDone = once(wrk, 'exit');
      await sleep(3000);
      for (const [i, server] of servers.entries()) {
        const old = instances[i] as Instance;
        const started = Date.now();
        old.child.kill('SIGTERM');
        assert.equal(await old.exited, 0, `instance ${i} exit code`);
        log(`WORKERS=${workers}: instance ${i} drained and exited 0 in ${Date.now() - started} ms`);
        instances[i] = await startInstance(t, workers, server.port, server.adminPort);
        // Up again in haproxy's eyes (rise 2) before the other one goes, as a Deployment's rollout waits for readiness.
        await allUp(stats, servers.length);
        await sleep(1000);
      }
      await sleep(2000);
      assert.equal(wrk.exitCode, null, 'the load went on through both restarts');
      wrk.kill('SIGINT');
      await wrkDone;
      const { requests, failed } = wrkCounts(output);
      log(`WORKERS=${workers}: ${requests} requests through haproxy, ${failed} failed`);
      assert.ok(requests > 1000, output);
      assert.equal(failed, 0, `${output}\n${haproxyLog}`);
      for (const instance of instances) instance.child.kill('SIGTERM');
      for (const instance of instances) assert.equal(await instance.exited, 0);
    });
  }
});
