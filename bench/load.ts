import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
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
  if (load.method === 'POST') args.push('-s', postScript(load, workDir));
  return parseWrk(await runPinned(pin, ['wrk', ...args, load.url]));
}

/** The POST script of a load, for wrk and wrk2 alike (their Lua API is the same). */
function postScript(load: Load, workDir: string): string {
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
  return script;
}

const WRK2 = 'wrk2-44a94c1';

/**
 * wrk2 (giltene/wrk2, Apache-2.0; its source in bench/vendor), built once into
 * ~/.cache/json-utility-service: the load at a fixed arrival rate. It needs make, a C compiler and
 * Debian's libssl-dev and zlib1g-dev.
 */
function wrk2(): string {
  const dir = join(homedir(), '.cache/json-utility-service', WRK2);
  const binary = join(dir, 'wrk');
  if (existsSync(binary)) return binary;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', new URL(`vendor/${WRK2}.tar.gz`, import.meta.url).pathname, '-C', dir, '--strip-components=1']);
  try {
    execFileSync('make', ['-j2'], { cwd: dir, stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`wrk2 (bench/vendor/${WRK2}.tar.gz) did not build: it needs make, a C compiler, libssl-dev and zlib1g-dev (apt-get install)`);
  }
  return binary;
}

export interface SteadyResult {
  /** The arrival rate asked for, and the rate answered. */
  rate: number;
  requestsPerSecond: number;
  requests: number;
  /** Latency from each request's intended send time (wrk2's HdrHistogram, corrected for coordinated omission). */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  errors: number;
  non2xx: number;
}

/**
 * A load at a fixed arrival rate (wrk2 -R), latency measured from when each request was due to
 * be sent, so that a stall counts against every request it delays. wrk2 spends its first ten
 * seconds calibrating: `seconds` should be 20 or more.
 */
export async function steadyLoad(load: Load, rate: number, pin: readonly string[], workDir: string): Promise<SteadyResult> {
  const args = ['-t1', `-c${load.connections}`, `-d${load.seconds}s`, `-R${rate}`, '--timeout', '10s', '--latency'];
  if (load.method === 'POST') args.push('-s', postScript(load, workDir));
  return parseWrk2(await runPinned(pin, [wrk2(), ...args, load.url]), rate);
}

/** What wrk2 printed with --latency, at the arrival rate it was given. */
export function parseWrk2(stdout: string, rate: number): SteadyResult {
  const { requests, requestsPerSecond, errors, non2xx } = wrkSummary(stdout);
  // Its percentiles are written 50.000% where wrk writes 50%, and 100.000% has no leading space.
  const at = (percentile: string) => wrkDuration(stdout, percentile, 'wrk2');
  return {
    rate,
    requestsPerSecond,
    requests,
    p50Ms: at('50.000'),
    p90Ms: at('90.000'),
    p99Ms: at('99.000'),
    p999Ms: at('99.900'),
    maxMs: at('100.000'),
    errors,
    non2xx,
  };
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

function wrkDuration(stdout: string, percentile: string, tool = 'wrk'): number {
  const match = new RegExp(`^\\s*${percentile.replace('.', '\\.')}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(stdout);
  if (!match) throw new Error(`${tool} printed no ${percentile}th percentile:\n${stdout}`);
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}

/** The lines wrk and wrk2 print alike: requests, req/s, socket errors, non-2xx answers and bytes read. */
function wrkSummary(stdout: string): Omit<LoadResult, 'p50Ms' | 'p99Ms'> {
  const requests = Number(/^\s*(\d+) requests in/m.exec(stdout)?.[1] ?? NaN);
  const requestsPerSecond = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(stdout)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  if (!Number.isFinite(requests) || !Number.isFinite(requestsPerSecond)) throw new Error(`unexpected wrk output:\n${stdout}`);
  // wrk's units are binary: 1.50MB is 1.5 × 2^20 bytes.
  const read = /requests in [\d.]+\w+, ([\d.]+)([KMGT]?B) read/.exec(stdout);
  const bytesRead = read === null ? undefined : Number(read[1]) * 1024 ** 'BKMGT'.indexOf((read[2] as string).charAt(0));
  return { requests, requestsPerSecond, errors, non2xx, ...(bytesRead === undefined ? {} : { bytesRead }) };
}

export function parseWrk(stdout: string): LoadResult {
  const { requests, requestsPerSecond, errors, non2xx, bytesRead } = wrkSummary(stdout);
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
