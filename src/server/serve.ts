import cluster from 'node:cluster';
import type { Config } from '../config.js';
import { tracingRequested } from '../http/observability/tracing-requested.js';
import { buildApp } from '../app.js';
import { LISTENING } from './cluster-messages.js';
import { announce, heapWarning, listenOrExit, serveAdmin } from './listen.js';
import { drainAndExit, listenForStop } from './shutdown.js';

/**
 * Serves in this process, alone or as one worker of a cluster, until a signal drains it (shutdown.ts).
 *
 * @example
 * await serve(readConfig(), 1);
 */
export async function serve(config: Config, workers: number): Promise<void> {
  const stopRequests = listenForStop();
  // No tracing code is loaded unless the OpenTelemetry environment asks for traces.
  const tracing = tracingRequested(process.env) ? (await import('../http/observability/tracing.js')).startTracing() : undefined;
  const app = await buildApp(config, { tracing });
  if (stopRequests.handleWith(drainAndExit(app, config, tracing && ((timeoutMs) => tracing.flush(timeoutMs))))) return;

  await app.memory.pool.warm();
  const address = await listenOrExit(app, config, 'port');
  // In a cluster the primary serves the admin port, with every worker's metrics.
  const adminAddress = cluster.isWorker ? undefined : await serveAdmin(config, { ready: () => app.lifecycle.ready, metrics: app.metrics }, app.serviceLog);
  const memory = app.memory.describe();
  const warning = heapWarning(app.memory.limit);
  if (warning !== undefined) app.serviceLog.warn(warning);
  if (cluster.isWorker) process.send?.({ type: LISTENING, address, memory });
  else announce(app.serviceLog, config.logLevel, address, workers, memory, adminAddress);
}
