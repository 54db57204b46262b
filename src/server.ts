import cluster, { type Worker } from 'node:cluster';
import { getHeapStatistics } from 'node:v8';
import pino from 'pino';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ConfigError, formatBytes, loadConfig, SETTINGS, workerCount, type Config } from './config.js';
import { detectMemoryLimit, processShare } from './http/memory/memory-limit.js';
import { clusterMetrics } from './http/observability/metrics.js';
import { buildAdminApp, type ProbeSources } from './http/observability/probes.js';
import { logDestination } from './http/observability/log-destination.js';
import { DOCS_PATH } from './http/operations/openapi.js';
import { buildApp, FRAMEWORK_LISTENING_TEXT, LOG_HOOKS } from './app.js';

/**
 * Running the service: one process, or with WORKERS > 1 a primary that keeps that many workers
 * serving one port (node:cluster), replaces any that crash, and drains them all on SIGTERM/SIGINT.
 */

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
const LISTENING = 'json-utility:listening';
// The primary tells a worker to stop, with the signal it got: a signal from a terminal reaches
// every process of the group, so workers leave SIGINT to the primary and stop when it says.
const STOP = 'json-utility:stop';
const RESTART_DELAY_MS = 200;

// How long the spans still held may take to reach the collector at exit.
const TRACE_FLUSH_MS = 3_000;

/**
 * Whether the standard OpenTelemetry environment asks for traces: an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or a traces exporter
 * (`OTEL_TRACES_EXPORTER` other than `none`), unless `OTEL_SDK_DISABLED=true`.
 *
 * @example
 * tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }) //=> true
 * tracingRequested({}) //=> false
 */
export function tracingRequested(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim() ?? '';
  if (exporter !== '') return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

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

/**
 * The one line that says the service is up, with the docs URL and the memory it has: written at
 * level info whatever LOG_LEVEL says (but `silent`), so that whoever started it sees where it is.
 */
function announce(log: FastifyBaseLogger, logLevel: Config['logLevel'], address: string, workers: number, memory: string, admin: string | undefined): void {
  if (logLevel === 'silent') return;
  const local = (url: string) => url.replace('://[::1]', '://localhost');
  const base = local(address);
  const across = workers > 1 ? ` (${workers} workers)` : '';
  const inCluster = workers > 1 ? { workers } : {};
  const probes = admin === undefined ? {} : { admin: local(admin) };
  log.child({}, { level: 'info' }).info({ address: base, docs: `${base}${DOCS_PATH}`, ...probes, ...inCluster, memory }, `listening on ${base}${across}`);
  (log as { flush?: () => void }).flush?.();
}

/** Why a server could not listen on `port`, in one line naming the address and the settings that choose it; undefined for other errors. */
function listenFailure(error: NodeJS.ErrnoException, config: Config, port: 'port' | 'adminPort'): string | undefined {
  const where = `${config.host}:${config[port]}`;
  const settings = `${SETTINGS[port].env} or ${SETTINGS.host.env}`;
  if (error.code === 'EADDRINUSE') return `Cannot listen on ${where}: the address is in use by another process; set ${settings} to another (EADDRINUSE)`;
  if (error.code === 'EACCES') return `Cannot listen on ${where}: permission denied (ports below 1024 need privileges); set ${settings} to another (EACCES)`;
  if (error.code === 'EADDRNOTAVAIL') return `Cannot listen on ${where}: this machine has no such address; set ${settings} to one of its own (EADDRNOTAVAIL)`;
  return undefined;
}

// A worker that cannot listen exits with this, so that the primary stops instead of starting another.
const EXIT_CANNOT_LISTEN = 78;

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

/**
 * Serves in this process; on a signal: readiness off, drain delay, stop accepting, finish, exit 0.
 * SIGTERM (what orchestrators and `docker stop` send) waits out DRAIN_DELAY_MS, so that load
 * balancers stop sending first; SIGINT (Ctrl-C, a person at a terminal) does not. A second signal
 * exits at once, with 1.
 */
async function serve(config: Config, workers: number): Promise<void> {
  // Listening for signals before the app is built: one that comes while it starts still drains cleanly.
  let stopRequested: string | undefined;
  let stop: (signal: string) => void = (signal) => {
    stopRequested ??= signal;
  };
  if (cluster.isWorker) {
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => undefined);
    process.on('message', (message: { type?: string; signal?: string }) => message?.type === STOP && stop(message.signal ?? 'SIGTERM'));
  } else {
    for (const signal of SIGNALS) process.on(signal, () => stop(signal));
  }

  // No tracing code is loaded unless the OpenTelemetry environment asks for traces.
  const tracing = tracingRequested(process.env) ? (await import('./http/observability/tracing.js')).startTracing() : undefined;
  const app = await buildApp(config, { tracing });
  let stopping = false;
  stop = (signal: string) => {
    if (stopping) {
      // A worker hears of one stop twice when a signal reaches the whole process group (timeout(1),
      // systemd, a terminal) and the primary passes it on as well: the primary decides on a second one.
      if (cluster.isWorker) return;
      app.log.warn({ signal }, 'a second signal: exiting now, with requests unfinished');
      process.exit(1);
    }
    stopping = true;
    app.lifecycle.stop();
    const drainDelayMs = signal === 'SIGINT' ? 0 : config.drainDelayMs;
    app.log.info({ signal, drainDelayMs }, 'shutting down: readiness off, draining');
    // Past the deadline, whatever is still open is cut and the exit code says so.
    setTimeout(() => {
      app.log.error({ shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutdown deadline passed; exiting with requests unfinished');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    setTimeout(() => {
      app.close().then(
        async () => {
          app.log.info('closed: every request answered');
          await tracing?.flush(TRACE_FLUSH_MS);
          process.exit(0);
        },
        (error: unknown) => {
          app.log.error({ err: error }, 'close failed');
          process.exit(1);
        },
      );
    }, drainDelayMs);
  };
  if (stopRequested !== undefined) {
    stop(stopRequested);
    return;
  }

  await app.memory.pool.warm();
  const address = await listenOrExit(app, config, 'port');
  // In a cluster the primary serves the admin port, with every worker's metrics.
  const adminAddress = cluster.isWorker ? undefined : await serveAdmin(config, { ready: () => app.lifecycle.ready, metrics: app.metrics }, app.log);
  const memory = app.memory.describe();
  const warning = heapWarning(app.memory.limit);
  if (warning !== undefined) app.log.warn(warning);
  if (cluster.isWorker) process.send?.({ type: LISTENING, address, memory });
  else announce(app.log, config.logLevel, address, workers, memory, adminAddress);
}

/** The admin port (ADMIN_PORT) listening with these probes: its address, or undefined when it is off. */
async function serveAdmin(config: Config, sources: ProbeSources, log: FastifyBaseLogger): Promise<string | undefined> {
  return config.adminPort === 'off' ? undefined : listenOrExit(await buildAdminApp(sources, log), config, 'adminPort');
}

/** Listens on PORT or ADMIN_PORT at HOST; a failure with a known cause goes to standard error and ends the process. */
async function listenOrExit(app: FastifyInstance, config: Config, port: 'port' | 'adminPort'): Promise<string> {
  try {
    return await app.listen({ port: config[port] as number, host: config.host, listenTextResolver: () => FRAMEWORK_LISTENING_TEXT });
  } catch (error) {
    const failure = listenFailure(error as NodeJS.ErrnoException, config, port);
    if (failure === undefined) throw error;
    process.stderr.write(`${failure}\n`);
    process.exit(cluster.isWorker ? EXIT_CANNOT_LISTEN : 1);
  }
}

function killAllAndExit(code: number): never {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
  process.exit(code);
}

/** Keeps `count` workers running until a signal; then waits for all of them to drain. */
async function supervise(config: Config, count: number): Promise<void> {
  let stopping = false;
  let announced = false;
  let exitCode = 0;
  // The primary writes to the same standard output as its workers, through the same destination.
  const log = pino({ level: config.logLevel, hooks: LOG_HOOKS }, logDestination(config.logFlushMs, config.logBacklogBytes));
  // Workers that listen can be drained; one still starting has no request and is simply stopped.
  const listening = new Set<number>();
  // Ready while a worker serves and shutdown has not begun.
  const adminAddress = await serveAdmin(config, { ready: () => !stopping && listening.size > 0, metrics: clusterMetrics(config.adminPort === 'off') }, log);
  // Each worker's heap from its share of MEMORY_LIMIT, unless the operator chose one.
  const share = processShare(config.memoryLimit === 'auto' ? detectMemoryLimit().bytes : config.memoryLimit, count);
  if (!`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`.includes('--max-old-space-size')) {
    cluster.setupPrimary({ execArgv: [...process.execArgv, `--max-old-space-size=${Math.max(64, Math.floor(share / MIB / 2))}`] });
  }
  const fork = (): Worker => cluster.fork();

  const stoppedWhileStarting = new Set<number>();
  cluster.on('message', (worker, message: { type?: string; address?: string; memory?: string }) => {
    if (message?.type !== LISTENING || message.address === undefined) return;
    listening.add(worker.id);
    // Announced once the whole first pool is up.
    if (!announced && listening.size === count) {
      announced = true;
      announce(log, config.logLevel, message.address, count, `each worker: ${message.memory ?? 'unknown'}`, adminAddress);
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    if (stopping) {
      if (code !== 0 && !stoppedWhileStarting.has(worker.id)) {
        exitCode = 1;
        log.error({ workerPid: worker.process.pid, code, signal }, 'worker ended badly while draining');
      }
      // A worker stays in cluster.workers until its IPC channel has closed too, which may come after
      // its 'exit' (Node's lib/internal/cluster/primary.js): count the ones still running.
      const running = Object.values(cluster.workers ?? {}).filter((other) => other !== undefined && other !== worker && !other.isDead());
      if (running.length === 0) process.exit(exitCode);
      return;
    }
    if (code === EXIT_CANNOT_LISTEN) {
      // It said why on standard error; another would fail the same way.
      killAllAndExit(1);
    }
    // The line's own `pid` is the primary's: the dead worker's goes under a key of its own.
    log.error({ workerPid: worker.process.pid, code, signal }, 'worker died; starting another');
    // A short pause, so that a worker failing at start cannot spin the primary.
    setTimeout(() => stopping || fork(), RESTART_DELAY_MS);
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'a second signal: exiting now, with requests unfinished');
      killAllAndExit(1);
    }
    stopping = true;
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 1000).unref();
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(0);
    for (const worker of workers) {
      if (worker === undefined) continue;
      if (listening.has(worker.id)) {
        worker.send({ type: STOP, signal });
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
  if (workers > 1 && cluster.isPrimary) await supervise(config, workers);
  else await serve(config, workers);
}
