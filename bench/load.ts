import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';

const run = promisify(execFile);

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Connection errors and timeouts. */
  errors: number;
  non2xx: number;
  /** wrk only: the bytes of the answers, headers included (wrk's "MB read"). */
  bytesRead?: number;
}

export interface Load {
  url: string;
  method: 'GET' | 'POST';
  /** A file holding the JSON body, for POST. */
  bodyFile?: string;
  connections: number;
  seconds: number;
  /** autocannon only: stop after this many requests instead of after `seconds`. */
  requests?: number;
  /** wrk only: headers besides the content type, such as `accept-encoding`. */
  headers?: Readonly<Record<string, string>>;
}

export type LoadGenerator = 'wrk' | 'autocannon';

export function installed(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs one load. wrk is started under `pin` (taskset), so that it stays off the server's CPU;
 * autocannon runs in this process, which run.ts pins to the same CPU as wrk (a process of its
 * own per load cost the smoke run 0.7 s a cell).
 */
export async function generateLoad(generator: LoadGenerator, load: Load, pin: readonly string[], workDir: string): Promise<LoadResult> {
  if (generator === 'autocannon') return autocannonLoad(load);
  const args = ['-t1', `-c${load.connections}`, `-d${load.seconds}s`, '--timeout', '10s', '--latency'];
  for (const [name, value] of Object.entries(load.headers ?? {})) args.push('-H', `${name}: ${value}`);
  if (load.method === 'POST') {
    const script = join(workDir, 'wrk-post.lua');
    writeFileSync(
      script,
      [
        'wrk.method = "POST"',
        'wrk.headers["Content-Type"] = "application/json"',
        `local file = assert(io.open(${JSON.stringify(load.bodyFile)}, "rb"))`,
        'wrk.body = file:read("*a")',
        'file:close()',
      ].join('\n'),
    );
    args.push('-s', script);
  }
  return parseWrk(await runPinned(pin, ['wrk', ...args, load.url]));
}

async function runPinned(pin: readonly string[], command: readonly string[]): Promise<string> {
  const [file, ...args] = [...pin, ...command] as [string, ...string[]];
  return (await run(file, args, { maxBuffer: 1 << 20 })).stdout;
}

async function autocannonLoad(load: Load): Promise<LoadResult> {
  const result = await autocannon({
    url: load.url,
    method: load.method,
    connections: load.connections,
    duration: load.seconds,
    ...(load.requests === undefined ? {} : { amount: load.requests }),
    // autocannon sees that a load is over only at the end of a sample (a second by default).
    sampleInt: load.requests === undefined ? Math.min(1000, load.seconds * 1000) : 50,
    ...(load.bodyFile === undefined ? {} : { body: readFileSync(load.bodyFile), headers: { 'content-type': 'application/json' } }),
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / (result.duration || load.seconds),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function wrkDuration(stdout: string, percentile: string): number {
  const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(stdout);
  if (!match) throw new Error(`wrk printed no ${percentile}th percentile:\n${stdout}`);
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}

export function parseWrk(stdout: string): LoadResult {
  const requests = Number(/^\s*(\d+) requests in/m.exec(stdout)?.[1] ?? NaN);
  const requestsPerSecond = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(stdout)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  if (!Number.isFinite(requests) || !Number.isFinite(requestsPerSecond)) throw new Error(`unexpected wrk output:\n${stdout}`);
  // wrk's units are binary: 1.50MB is 1.5 × 2^20 bytes.
  const read = /requests in [\d.]+\w+, ([\d.]+)([KMGT]?B) read/.exec(stdout);
  const bytesRead = read === null ? undefined : Number(read[1]) * 1024 ** 'BKMGT'.indexOf((read[2] as string).charAt(0));
  return {
    requests,
    requestsPerSecond,
    p50Ms: wrkDuration(stdout, '50'),
    p99Ms: wrkDuration(stdout, '99'),
    errors,
    non2xx,
    ...(bytesRead === undefined ? {} : { bytesRead }),
  };
}
