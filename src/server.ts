import cluster, { type Worker } from 'node:cluster';
import { getHeapStatistics } from 'node:v8';
import { ConfigError, formatBytes, loadConfig, workerCount, type Config } from './config.js';
import { detectMemoryLimit, processShare } from './http/memory/memory-limit.js';
import { serveClusterMetrics } from './http/observability/metrics.js';
import { DOCS_PATH } from './http/operations/openapi.js';
import { buildApp } from './app.js';

/**
 * Running the service: one process, or with WORKERS > 1 a primary that keeps that many workers
 * serving one port (node:cluster), replaces any that crash, and drains them all on SIGTERM/SIGINT.
 */

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
const LISTENING = 'json-utility:listening';
const RESTART_DELAY_MS = 200;

/** The configuration from `env`, or exit 2 with a message naming each bad variable. */
export function readConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`Invalid configuration:\n${error.message}\n`);
    process.exit(2);
  }
}

function announce(address: string, workers: number, memory: string): void {
  const base = address.replace('://[::1]', '://localhost');
  const across = workers > 1 ? ` (${workers} workers)` : '';
  process.stdout.write(`JSON utility service listening on ${base}${across}\nAPI docs: ${base}${DOCS_PATH}\n${memory}\n`);
}

const MIB = 1024 * 1024;

/**
 * The V8 heap must not count on more than the process may use, or the kernel's OOM killer comes
 * before the garbage collector. The pool threads get their heap limit from the budget; the
 * event loop's heap is set by `--max-old-space-size` (cluster workers get one from their share).
 */
function heapWarning(limit: number): string | undefined {
  const heap = getHeapStatistics().heap_size_limit;
  if (heap <= limit) return undefined;
  return `the V8 heap limit (${formatBytes(heap)}) is above this process's memory limit (${formatBytes(limit)}): start node with --max-old-space-size=${Math.floor(limit / MIB / 2)} (NODE_OPTIONS), as deploy/Dockerfile does`;
}

/** Serves in this process; on a signal: readiness off, drain delay, stop accepting, finish, exit 0. */
async function serve(config: Config, workers: number): Promise<void> {
  // Listening for signals before the app is built: one that comes while it starts still drains cleanly.
  let stopRequested: string | undefined;
  let stop: (signal: string) => void = (signal) => {
    stopRequested ??= signal;
  };
  for (const signal of SIGNALS) process.on(signal, () => stop(signal));

  const app = await buildApp(config);
  let stopping = false;
  stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.lifecycle.ready = false;
    app.log.info({ signal, drainDelayMs: config.drainDelayMs }, 'shutting down: readiness off, draining');
    // Past the deadline, whatever is still open is cut and the exit code says so.
    setTimeout(() => {
      app.log.error({ shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutdown deadline passed; exiting with requests unfinished');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    setTimeout(() => {
      app.close().then(
        () => {
          app.log.info('closed: every request answered');
          process.exit(0);
        },
        (error: unknown) => {
          app.log.error({ err: error }, 'close failed');
          process.exit(1);
        },
      );
    }, config.drainDelayMs);
  };
  if (stopRequested !== undefined) {
    stop(stopRequested);
    return;
  }

  await app.memory.pool.warm();
  const address = await app.listen({ port: config.port, host: config.host });
  const memory = app.memory.describe();
  app.log.info({ address, docs: `${address}${DOCS_PATH}`, memory }, 'listening');
  const warning = heapWarning(app.memory.limit);
  if (warning !== undefined) app.log.warn(warning);
  if (cluster.isWorker) process.send?.({ type: LISTENING, address, memory });
  else announce(address, workers, `Memory: ${memory}`);
}

/** Keeps `count` workers running until a signal; then waits for all of them to drain. */
function supervise(config: Config, count: number): void {
  let stopping = false;
  let announced = false;
  let exitCode = 0;
  serveClusterMetrics();
  // Each worker's heap from its share of MEMORY_LIMIT, unless the operator chose one.
  const share = processShare(config.memoryLimit === 'auto' ? detectMemoryLimit().bytes : config.memoryLimit, count);
  if (!`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`.includes('--max-old-space-size')) {
    cluster.setupPrimary({ execArgv: [...process.execArgv, `--max-old-space-size=${Math.max(64, Math.floor(share / MIB / 2))}`] });
  }
  const fork = (): Worker => cluster.fork();

  // Workers that listen can be drained; one still starting has no request and is simply stopped.
  const listening = new Set<number>();
  const stoppedWhileStarting = new Set<number>();
  cluster.on('message', (worker, message: { type?: string; address?: string; memory?: string }) => {
    if (message?.type !== LISTENING || message.address === undefined) return;
    listening.add(worker.id);
    // Announced once the whole first pool is up.
    if (!announced && listening.size === count) {
      announced = true;
      announce(message.address, count, `Memory, each worker: ${message.memory ?? 'unknown'}`);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    if (stopping) {
      if (code !== 0 && !stoppedWhileStarting.has(worker.id)) {
        exitCode = 1;
        process.stderr.write(
          `${JSON.stringify({ level: 50, time: Date.now(), msg: 'worker ended badly while draining', pid: worker.process.pid, code, signal })}\n`,
        );
      }
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    process.stderr.write(`${JSON.stringify({ level: 50, time: Date.now(), msg: 'worker died; starting another', pid: worker.process.pid, code, signal })}\n`);
    // A short pause, so that a worker failing at start cannot spin the primary.
    setTimeout(() => stopping || fork(), RESTART_DELAY_MS);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 1000).unref();
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(0);
    for (const worker of workers) {
      if (worker === undefined) continue;
      if (listening.has(worker.id)) {
        worker.process.kill(signal);
      } else {
        stoppedWhileStarting.add(worker.id);
        worker.process.kill('SIGKILL');
      }
    }
  };
  for (const signal of SIGNALS) process.on(signal, () => stop(signal));

  for (let i = 0; i < count; i++) fork();
}

/** Serves with this configuration: in this process, or as the primary of WORKERS processes. */
export async function run(config: Config): Promise<void> {
  const workers = workerCount(config);
  if (workers > 1 && cluster.isPrimary) supervise(config, workers);
  else await serve(config, workers);
}
