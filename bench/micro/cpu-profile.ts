/**
 * A CPU profile of one server under S1 (`POST /api/isEven {"input":12345}`), in the state it runs
 * in after mixed traffic: the server (pinned to CPU 0 when taskset is there) is started with
 * `--cpu-prof`, warmed with the bench's mixed requests one at a time (bench/warm-up.ts), then
 * loaded by autocannon for 6 s with 50 connections and stopped. Prints its req/s; the profile goes
 * to PROFILE_DIR, to be summed by cpu-profile-summary.ts. Build first (`npm run build`).
 *   npx tsx bench/micro/cpu-profile.ts dist/main.js /tmp/prof-service
 *   npx tsx bench/micro/cpu-profile.ts bench/fastify-floor/server.mjs /tmp/prof-floor
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import autocannon from 'autocannon';
import { tmpdir } from 'node:os';
import { warmUp, WARM_UP_PASSES } from '../warm-up.js';

const [entry, profileDir] = process.argv.slice(2);
if (entry === undefined || profileDir === undefined) throw new Error('usage: npx tsx bench/micro/cpu-profile.ts <server entry> <profile dir>');
const PORT = '3999';
const base = `http://127.0.0.1:${PORT}`;

const server = spawn('taskset', ['-c', '0', process.execPath, '--cpu-prof', `--cpu-prof-dir=${profileDir}`, entry], {
  cwd: new URL('../..', import.meta.url),
  env: { ...process.env, PORT, HOST: '127.0.0.1', DRAIN_DELAY_MS: '0', WORKERS: '1' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise<void>((resolve) => server.stdout.on('data', (chunk: Buffer) => String(chunk).includes('listening') && resolve()));

await warmUp(base, { passes: WARM_UP_PASSES, loads: 0, generator: 'autocannon', pin: [], workDir: tmpdir(), connections: 50 });
const result = await autocannon({
  url: `${base}/api/isEven`,
  method: 'POST',
  body: '{"input":12345}',
  headers: { 'content-type': 'application/json' },
  connections: 50,
  duration: 6,
});
console.log(`${Math.round(result.requests.average)} req/s`);
server.kill('SIGTERM');
await once(server, 'exit');
