import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { START_FLAGS, startFlagsOf } from '../scripts/start-flags.js';

const root = new URL('..', import.meta.url).pathname;

export type BaseTargetName =
  | 'service'
  | 'service-before'
  | 'service-logged'
  | 'service-traced'
  | 'service-traced-before'
  | 'service-unsampled'
  | 'baseline'
  | 'node-features'
  | 'fastify'
  | 'fastify-logger'
  | 'express'
  | 'refusing';

/**
 * A target, or a variant of one: `service-traced+batch64` is `service-traced` with the settings
 * `--variant batch64:NAME=VALUE` gave the label `batch64` (defineVariant), so that settings, such
 * as the tracing SDK's OTEL_BSP_*, are compared in one run.
 */
export type TargetName = BaseTargetName | `${BaseTargetName}+${string}`;

interface Target {
  readonly entry: string;
  /** Node.js flags before the entry: the service's are `npm start`'s (a `-before` target's, its checkout's). */
  readonly nodeFlags?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly traced?: true;
  readonly before?: true;
}

/** The built service as `npm start` runs it (its flags), with the drain delay cut so that it stops at once, and `env` on top. */
const service = (env: Readonly<Record<string, string>> = {}): Target => ({
  entry: join(root, 'dist/main.js'),
  nodeFlags: START_FLAGS,
  env: { WORKERS: '1', DRAIN_DELAY_MS: '0', ...env },
});

/** Each target is its own process, started with `node` (the service with `npm start`'s flags) on a free port; a traced one exports its spans to the bench's OTLP receiver. */
const TARGETS: Record<BaseTargetName, Target> = {
  // Production defaults (LOG_LEVEL=info, ACCESS_LOG=minimal, security headers, CORS, metrics, memory admission).
  service: service(),
  // Another build of the service, for an A/B in one run: the checkout named by BENCH_BEFORE (`npm run bench -- --before DIR`), built there.
  'service-before': { ...service(), before: true },
  // The same with every request logged, as before ACCESS_LOG existed.
  'service-logged': service({ ACCESS_LOG: 'all' }),
  // The service with OpenTelemetry tracing on, every request's span recorded and exported (OTLP/HTTP, the
  // SDK's default protobuf encoding and batching) to the receiver the bench starts (startReceiver).
  'service-traced': { ...service(), traced: true },
  // The same for the checkout named by BENCH_BEFORE: tracing's own A/B in one run.
  'service-traced-before': { ...service(), traced: true, before: true },
  // The same with every request sampled out (`always_off`): what tracing configured costs a request it does not record.
  'service-unsampled': { ...service({ OTEL_TRACES_SAMPLER: 'always_off' }), traced: true },
  baseline: { entry: join(root, 'bench/baseline/server.mjs'), env: {} },
  // The featured floor: the baseline plus what the service does per request by default (FEATURES picks the parts; `log` adds a line per request).
  'node-features': { entry: join(root, 'bench/node-http-features/server.mjs'), env: {} },
  fastify: { entry: join(root, 'bench/fastify-floor/server.mjs'), env: {} },
  'fastify-logger': { entry: join(root, 'bench/fastify-floor/server.mjs'), env: { FASTIFY_LOGGER: '1' } },
  express: { entry: join(root, 'bench/express/server.mjs'), env: { NODE_ENV: 'production' } },
  // Refuses every request at once (bench/overload.ts asks it what the generator alone can offer).
  refusing: { entry: join(root, 'bench/refusing/server.mjs'), env: {} },
};

const variants = new Map<string, Record<string, string>>();

/**
 * Adds one setting to a variant's label, from `LABEL:NAME=VALUE` (`--variant`; repeat a label for more settings).
 *
 * @example
 * defineVariant('batch64:OTEL_BSP_MAX_EXPORT_BATCH_SIZE=64'); // then target 'service-traced+batch64'
 */
export function defineVariant(spec: string): void {
  const match = /^([\w.-]+):([A-Za-z_]\w*)=(.*)$/s.exec(spec);
  if (match === null) throw new Error(`--variant takes LABEL:NAME=VALUE, such as batch64:OTEL_BSP_MAX_EXPORT_BATCH_SIZE=64, not ${JSON.stringify(spec)}`);
  const [, label, name, value] = match as unknown as [string, string, string, string];
  variants.set(label, { ...variants.get(label), [name]: value });
}

/** Every variant's settings by label, for the report. */
export function variantSettings(): Record<string, Record<string, string>> {
  return Object.fromEntries(variants);
}

/**
 * A target by name: one of TARGETS, or `BASE+LABEL`, the base with its variant's settings over its own.
 *
 * @example
 * targetOf('service-traced+batch64').env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE //=> '64'
 */
export function targetOf(name: string): Target {
  const plus = name.indexOf('+');
  const baseName = plus === -1 ? name : name.slice(0, plus);
  const base = Object.hasOwn(TARGETS, baseName) ? TARGETS[baseName as BaseTargetName] : undefined;
  if (base === undefined)
    throw new Error(`unknown target ${JSON.stringify(name)}; the targets are ${Object.keys(TARGETS).join(', ')}, each with +LABEL for a --variant`);
  if (plus === -1) return base;
  const settings = variants.get(name.slice(plus + 1));
  if (settings === undefined) throw new Error(`target ${name}: no --variant ${name.slice(plus + 1)}:NAME=VALUE was given`);
  return { ...base, env: { ...base.env, ...settings } };
}

/**
 * The file a target runs: for a `-before` target, the same file in the checkout BENCH_BEFORE names,
 * read when it starts (this module's TARGETS is built before run.ts has read its flags).
 */
export function entryOf(name: TargetName): string {
  const target = targetOf(name);
  if (target.before !== true) return target.entry;
  return join(checkoutBefore(name), relative(root, target.entry));
}

function checkoutBefore(name: TargetName): string {
  const before = process.env.BENCH_BEFORE;
  if (before === undefined) throw new Error(`${name} runs another checkout's build: name it with --before DIR`);
  return before;
}

/** The Node.js flags a target starts with: a `-before` target's are those of the checkout BENCH_BEFORE names. */
function nodeFlagsOf(name: TargetName): readonly string[] {
  const target = targetOf(name);
  return target.before === true ? startFlagsOf(checkoutBefore(name)) : (target.nodeFlags ?? []);
}

export interface RunningTarget {
  readonly name: TargetName;
  readonly base: string;
  readonly pid: number;
  /** Everything the process wrote to stdout: for the service, its log. */
  readonly logFile: string;
  stop(): Promise<void>;
}

/** Starts a target (pinned with `pin`, e.g. `taskset -c 0`; `nodeFlags` before its entry), its stdout going to a file as a log shipper would read it. */
export async function startTarget(
  name: TargetName,
  pin: readonly string[],
  workDir: string,
  env: Record<string, string> = {},
  nodeFlags: readonly string[] = [],
): Promise<RunningTarget> {
  const target = targetOf(name);
  let tracing: Record<string, string> = {};
  if (target.traced) {
    // BENCH_COLLECTOR (`npm run bench -- --collector URL`): a collector that is down or slow instead of the receiver.
    const collector = process.env.BENCH_COLLECTOR ?? receiver?.base;
    if (collector === undefined) throw new Error(`${name} exports spans: start the OTLP receiver first (startReceiver)`);
    tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: collector };
  }
  const started = await startProcess(name, pin, [process.execPath, ...nodeFlagsOf(name), ...nodeFlags, entryOf(name)], workDir, {
    ...target.env,
    ...tracing,
    ...env,
  });
  return { name, ...started };
}

let receiver: Omit<RunningTarget, 'name'> | undefined;

/** Starts the loopback OTLP/HTTP receiver (bench/otlp-receiver) that the traced targets export to, once; pin it away from the servers. */
export async function startReceiver(pin: readonly string[], workDir: string): Promise<{ stop(): Promise<void> }> {
  receiver ??= await startProcess('otlp-receiver', pin, [process.execPath, join(root, 'bench/otlp-receiver/server.mjs')], workDir, {});
  const started = receiver;
  return {
    async stop() {
      await started.stop();
      receiver = undefined;
    },
  };
}

async function startProcess(
  name: string,
  pin: readonly string[],
  argv: readonly string[],
  workDir: string,
  env: Record<string, string>,
): Promise<Omit<RunningTarget, 'name'>> {
  const logFile = join(workDir, `${name}-${Date.now()}.log`);
  const out = openSync(logFile, 'w');
  const [command, ...args] = [...pin, ...argv];
  const child: ChildProcess = spawn(command as string, args, {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', out, 'inherit'],
  });
  closeSync(out);
  const exited = once(child, 'exit');
  const deadline = Date.now() + 20_000;
  for (;;) {
    const match = /listening on (http:\/\/[^\s"]+)/.exec(readFileSync(logFile, 'utf8'));
    if (match) {
      return {
        base: match[1] as string,
        pid: child.pid as number,
        logFile,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            await exited;
          }
        },
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${name} did not start:\n${readFileSync(logFile, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A figure from /proc/<pid>/status, in MiB: VmRSS now, VmHWM the peak. */
export function memoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`)) ?? '';
  return Math.round(Number(/\d+/.exec(line)?.[0] ?? NaN) / 1024);
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** The user and system CPU time used so far, in microseconds, from a /proc stat file: a process's, or one thread's (/proc/<pid>/task/<tid>/stat). */
function cpuTimesOf(statFile: string): { user: number; system: number } {
  // The command name (field 2) may hold spaces: count fields from after its closing parenthesis.
  const fields = readFileSync(statFile, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user: (Number(fields[11]) * 1e6) / TICKS_PER_SECOND, system: (Number(fields[12]) * 1e6) / TICKS_PER_SECOND };
}

/** The CPU time (user and system) a process has used so far, in microseconds, from /proc/<pid>/stat. */
export function cpuMicroseconds(pid: number): number {
  const { user, system } = cpuTimesOf(`/proc/${pid}/stat`);
  return user + system;
}

/** The CPU time of a process and of every live process under it (a cluster's workers), in microseconds. */
export function treeCpuMicroseconds(pid: number): number {
  try {
    let total = cpuMicroseconds(pid);
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean);
      for (const child of children) total += treeCpuMicroseconds(Number(child));
    }
    return total;
  } catch {
    return 0; // it ended while being read
  }
}
