import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { SIGNALS, STOP } from './cluster-messages.js';

// How long the spans still held may take to reach the collector at exit.
const TRACE_FLUSH_MS = 3_000;

export interface StopRequests {
  /** From now on a stop calls `stop`; true when one came before (then `stop` has just been called). */
  handleWith(stop: (signal: string) => void): boolean;
}

/**
 * Listens for what stops this process, from before the app is built, so that a signal that comes
 * while it starts still drains cleanly: SIGTERM and SIGINT, or in a cluster worker SIGTERM and the
 * primary's STOP message.
 *
 * @example
 * const requests = listenForStop(); // ... build the app
 * if (requests.handleWith(drainAndExit(app, config))) return;
 */
export function listenForStop(): StopRequests {
  let pending: string | undefined;
  let handler: ((signal: string) => void) | undefined;
  const stop = (signal: string) => (handler === undefined ? (pending ??= signal) : handler(signal));
  if (cluster.isWorker) {
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => undefined);
    process.on('message', (message: { type?: string; signal?: string }) => message?.type === STOP && stop(message.signal ?? 'SIGTERM'));
  } else {
    for (const signal of SIGNALS) process.on(signal, () => stop(signal));
  }
  return {
    handleWith(next) {
      handler = next;
      if (pending === undefined) return false;
      next(pending);
      return true;
    },
  };
}

/**
 * What a signal does to a serving process: readiness off, drain delay, stop accepting, finish,
 * flush the spans still held, exit 0. SIGTERM (what orchestrators and `docker stop` send) waits out
 * DRAIN_DELAY_MS, so that load balancers stop sending first; SIGINT (Ctrl-C, a person at a
 * terminal) does not. A second signal exits at once, with 1; past SHUTDOWN_TIMEOUT_MS, with 1.
 *
 * @example
 * listenForStop().handleWith(drainAndExit(app, config, (ms) => tracing.flush(ms)));
 */
export function drainAndExit(app: FastifyInstance, config: Config, flushSpans?: (timeoutMs: number) => Promise<void>): (signal: string) => void {
  let stopping = false;
  return (signal) => {
    if (stopping) {
      // A worker hears of one stop twice when a signal reaches the whole process group (timeout(1),
      // systemd, a terminal) and the primary passes it on as well: the primary decides on a second one.
      if (cluster.isWorker) return;
      app.serviceLog.warn({ signal }, 'a second signal: exiting now, with requests unfinished');
      process.exit(1);
    }
    stopping = true;
    app.lifecycle.stop();
    const drainDelayMs = signal === 'SIGINT' ? 0 : config.drainDelayMs;
    app.serviceLog.info({ signal, drainDelayMs }, 'shutting down: readiness off, draining');
    // Past the deadline, whatever is still open is cut and the exit code says so.
    setTimeout(() => {
      app.serviceLog.error({ shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutdown deadline passed; exiting with requests unfinished');
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    setTimeout(() => {
      app.close().then(
        async () => {
          app.serviceLog.info('closed: every request answered');
          await flushSpans?.(TRACE_FLUSH_MS);
          process.exit(0);
        },
        (error: unknown) => {
          app.serviceLog.error({ err: error }, 'close failed');
          process.exit(1);
        },
      );
    }, drainDelayMs);
  };
}
