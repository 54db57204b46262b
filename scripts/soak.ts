/**
 * `npm run soak [-- --seconds 60 --connections 64 --workers 1]`: mixed operations at saturation
 * against the real server (built, production logging), then the figures that matter for a
 * long-running service: errors (must be 0), throughput, p99 latency, the server's RSS at start and
 * end (should stay flat) and its event-loop delay. Not part of CI. Loopback only.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { START_FLAGS } from './start-flags.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '60' }, connections: { type: 'string', default: '64' }, workers: { type: 'string', default: '1' } },
});
const root = new URL('..', import.meta.url).pathname;

const json = { 'content-type': 'application/json' };
const REQUESTS = [
  { method: 'POST', path: '/api/isEven', headers: json, body: '{"input":9007199254740993}' },
  { method: 'GET', path: '/api/isOdd/123456789012345678901234567891' },
  { method: 'POST', path: '/api/sort', headers: json, body: JSON.stringify({ input: Array.from({ length: 200 }, (_, i) => (i * 7919) % 1000) }) },
  { method: 'POST', path: '/api/toString', headers: json, body: JSON.stringify({ input: { b: [1.5, 'x', null], a: { c: true } } }) },
  { method: 'POST', path: '/api/stringSplit', headers: json, body: JSON.stringify({ input: { string: '👍🏽 héllo wörld 中文 '.repeat(20), seperator: '' } }) },
  { method: 'POST', path: '/api/isNumber', headers: json, body: '{"input":" 0x1F "}' },
  { method: 'POST', path: '/is-odd', headers: json, body: '{"number":7}' },
] as const;

function rssMegabytes(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:')) ?? '0';
  return Math.round(Number(/\d+/.exec(line)?.[0] ?? 0) / 1024);
}

async function main(): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    spawn('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' }).on('exit', (c) => (c === 0 ? resolve() : reject(new Error('build failed')))),
  );
  const server = spawn(process.execPath, [...START_FLAGS, 'dist/main.js'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', WORKERS: values.workers, DRAIN_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let banner = '';
  const base = await new Promise<string>((resolve) => {
    server.stdout.on('data', (chunk: Buffer) => {
      banner += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s"]+)/.exec(banner);
      if (match) resolve(match[1] as string);
    });
  });
  // Log lines are read and dropped, as a log shipper would.
  server.stdout.resume();

  await autocannon({ url: base, connections: 8, duration: 3, requests: [...REQUESTS] }); // warm-up
  const rssStart = rssMegabytes(server.pid as number);
  const result = await autocannon({ url: base, connections: Number(values.connections), duration: Number(values.seconds), requests: [...REQUESTS] });
  const rssEnd = rssMegabytes(server.pid as number);
  const metrics = await (await fetch(`${base}/metrics`)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN) * 1000;
  server.kill('SIGTERM');

  const errors = result.errors + result.timeouts + result.non2xx;
  const report = {
    seconds: Number(values.seconds),
    connections: Number(values.connections),
    workers: values.workers,
    requests: result.requests.total,
    errors,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    rssStartMb: rssStart,
    rssEndMb: rssEnd,
    eventLoopDelayP99Ms: Math.round(gauge('nodejs_eventloop_lag_p99_seconds') * 10) / 10,
    eventLoopDelayMaxMs: Math.round(gauge('nodejs_eventloop_lag_max_seconds') * 10) / 10,
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = errors === 0 ? 0 : 1;
}

await main();
