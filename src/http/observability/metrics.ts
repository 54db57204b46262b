import cluster from 'node:cluster';
import { Counter, Gauge, Registry, collectDefaultMetrics, type Aggregator, type Metric } from 'prom-client';
import { RequestDurations } from './request-durations.js';
import { answerPrimaryCollections, askPrimaryForClusterMetrics } from './cluster-metrics.js';

/**
 * Prometheus metrics (https://github.com/siimon/prom-client): request counts and latency by
 * method, route template and status, plus the process's own (CPU, memory, event-loop delay, GC).
 * Labels use the route template, never the raw URL, and one `unmatched` value for unknown paths,
 * so that their number stays bounded.
 */

const UNMATCHED_ROUTE = 'unmatched';

// Process metrics exist once per process, however many apps a test builds.
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * A counter whose value is read from elsewhere when `/metrics` is scraped.
 *
 * @example
 * metrics.register(counterOf('log_lines_dropped_total', 'Log lines dropped', droppedLogLines));
 */
export function counterOf(name: string, help: string, read: () => number): Counter {
  return new Counter({
    name,
    help,
    registers: [],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/**
 * A gauge whose value is read from elsewhere when `/metrics` is scraped; with WORKERS > 1 the
 * workers' values are summed, or combined as `aggregator` says.
 *
 * @example
 * metrics.register(gaugeOf('memory_budget_reserved_bytes', 'Memory reserved', () => budget.reserved));
 */
export function gaugeOf(name: string, help: string, read: () => number, aggregator: Aggregator = 'sum'): Gauge {
  return new Gauge({
    name,
    help,
    aggregator,
    registers: [],
    collect() {
      this.set(read());
    },
  });
}

/** Where a request was when its client went away: sending its body, waiting for the answer, or taking it. */
export type ClientGoneStage = 'upload' | 'waiting' | 'answer';

export interface HttpMetrics {
  /** Adds a metric of another part of the service to this registry. */
  register(metric: Metric): void;
  observe(method: string, route: string | undefined, status: number, seconds: number): void;
  /** Counts `n` answers of an operation with this status, in a single request, a batch or a stream. */
  countOperation(operation: string, status: number, n?: number): void;
  /** Counts a request whose client went away before its answer was flushed whole, by the stage it had reached. */
  countClientGone(stage: ClientGoneStage): void;
  /** The exposition text: this process's, or in a cluster worker every worker's, summed. */
  text(): Promise<string>;
  readonly contentType: string;
}

/**
 * The request and operation metrics of one app, with the process's own.
 *
 * @example
 * const metrics = createHttpMetrics(); metrics.observe('POST', '/api/sort', 200, 0.0004); await metrics.text();
 */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  const durations = new RequestDurations();
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const cell of durations.cells) this.inc(cell.labels, cell.count);
    },
  });
  registry.registerMetric(durations.metric);
  // operation → status → how many: labels resolved at the scrape, as for the cells above.
  type OperationCount = { readonly labels: { operation: string; status: string }; n: number };
  const operationCounts = new Map<string, Map<number, OperationCount>>();
  new Counter({
    name: 'operations_total',
    help: 'Operations answered, by operation and status: one per single request, one per item of a batch or line of a stream',
    labelNames: ['operation', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const byStatus of operationCounts.values()) for (const { labels, n } of byStatus.values()) this.inc(labels, n);
    },
  });
  const clientsGone = new Counter({
    name: 'http_clients_gone_total',
    help: 'Requests whose client closed the connection before the answer was flushed whole, by stage: upload (its body had not all arrived), waiting (no answer begun), answer (part of it sent)',
    labelNames: ['stage'],
    registers: [registry],
  });
  const registries = [registry, processMetrics()];
  if (cluster.isWorker) answerPrimaryCollections(registries);

  return {
    contentType: registry.contentType,
    register: (metric) => registry.registerMetric(metric),
    observe: (method, route, status, seconds) => durations.observe(method, route ?? UNMATCHED_ROUTE, status, seconds),
    countOperation(operation, status, n = 1) {
      let byStatus = operationCounts.get(operation);
      if (byStatus === undefined) operationCounts.set(operation, (byStatus = new Map<number, OperationCount>()));
      const count = byStatus.get(status);
      if (count === undefined) byStatus.set(status, { labels: { operation, status: String(status) }, n });
      else count.n += n;
    },
    countClientGone: (stage) => clientsGone.inc({ stage }),
    async text() {
      if (cluster.isWorker && process.send !== undefined) return askPrimaryForClusterMetrics();
      return Registry.merge(registries).metrics();
    },
  };
}
