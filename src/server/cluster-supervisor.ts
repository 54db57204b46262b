import cluster, { type Worker } from 'node:cluster';
import pino from 'pino';
import type { Config } from '../config.js';
import { detectMemoryLimit, processShare } from '../http/memory/memory-limit.js';
import { clusterMetrics } from '../http/observability/cluster-metrics.js';
import { logDestination } from '../http/observability/log-destination.js';
import { LOG_HOOKS } from '../http/observability/service-logger.js';
import { EXIT_CANNOT_LISTEN, LISTENING, SIGNALS, STOP } from './cluster-messages.js';
import { announce, serveAdmin, workersWarning } from './listen.js';

const RESTART_DELAY_MS = 200;
const MIB = 1024 * 1024;

function killAllAndExit(code: number): never {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
  process.exit(code);
}

/**
 * The primary of WORKERS > 1: keeps `count` workers serving one port (node:cluster), replaces any
 * that crash, serves the admin port with every worker's metrics, and on SIGTERM/SIGINT tells each
 * to drain and waits for all of them.
 *
 * @example
 * if (cluster.isPrimary) await supervise(config, 4);
 */
export async function supervise(config: Config, count: number): Promise<void> {
  let stopping = false;
  let announced = false;
  let exitCode = 0;
  // The primary writes to the same standard output as its workers, through the same destination.
  const log = pino({ level: config.logLevel, hooks: LOG_HOOKS }, logDestination(config.logFlushMs, config.logBacklogBytes));
  // Workers that listen can be drained; one still starting has no request and is simply stopped.
  const listening = new Set<number>();
  // Ready while a worker serves and shutdown has not begun.
  const adminAddress = await serveAdmin(config, { ready: () => !stopping && listening.size > 0, metrics: clusterMetrics(config.adminPort === 'off') }, log);
  // Each worker accepts its own connections from the shared socket, unless the operator chose
  // Node's round robin (NODE_CLUSTER_SCHED_POLICY=rr): past capacity a primary that accepts every
  // connection and hands it on is a queue no worker's overload control sees (docs/operations.md,
  // "Several cores"). It must be set before setupPrimary or the first fork freezes it.
  if (process.env.NODE_CLUSTER_SCHED_POLICY === undefined) cluster.schedulingPolicy = cluster.SCHED_NONE;
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
      const warning = workersWarning(count);
      if (warning !== undefined) log.warn(warning);
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
