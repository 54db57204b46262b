import cluster from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

/**
 * Prometheus metrics (https://github.com/siimon/prom-client): request counts and latency by
 * method, route template and status, plus the process's own (CPU, memory, event-loop delay, GC).
 * Labels use the route template, never the raw URL, and one `unmatched` value for unknown paths,
 * so that their number stays bounded.
 */

export const UNMATCHED_ROUTE = 'unmatched';

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
 * A gauge whose value is read from elsewhere when `/metrics` is scraped.
 *
 * @example
 * metrics.register(gaugeOf('memory_budget_reserved_bytes', 'Memory reserved', () => budget.reserved));
 */
export function gaugeOf(name: string, help: string, read: () => number): Gauge {
  return new Gauge({
    name,
    help,
    registers: [],
    collect() {
      this.set(read());
    },
  });
}

export interface HttpMetrics {
  /** Adds a metric of another part of the service to this registry. */
  register(metric: Metric): void;
  observe(method: string, route: string | undefined, status: number, seconds: number): void;
  /** Counts `n` answers of an operation with this status, in a single request, a batch or a stream. */
  countOperation(operation: string, status: number | string, n?: number): void;
  /** The exposition text: this process's, or in a cluster worker every worker's, summed. */
  text(): Promise<string>;
  readonly contentType: string;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const LABELS = ['method', 'route', 'status'] as const;

export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: LABELS, registers: [registry] });
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response',
    labelNames: LABELS,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const operations = new Counter({
    name: 'operations_total',
    help: 'Operations answered, by operation and status: one per single request, one per item of a batch or line of a stream',
    labelNames: ['operation', 'status'],
    registers: [registry],
  });
  const registries = [registry, processMetrics()];
  if (cluster.isWorker) {
    AggregatorRegistry.setRegistries(registries);
    // Constructing one is what makes prom-client answer the primary's collection requests here.
    new AggregatorRegistry();
  }

  return {
    contentType: registry.contentType,
    register: (metric) => registry.registerMetric(metric),
    observe(method, route, status, seconds) {
      const labels = { method, route: route ?? UNMATCHED_ROUTE, status };
      requests.inc(labels);
      durations.observe(labels, seconds);
    },
    countOperation(operation, status, n = 1) {
      operations.inc({ operation, status }, n);
    },
    async text() {
      if (cluster.isWorker && process.send !== undefined) return askPrimaryForClusterMetrics();
      return Registry.merge(registries).metrics();
    },
  };
}

// ---- cluster aggregation: a worker asks the primary, which collects from every worker.

const METRICS_REQUEST = 'json-utility:metrics-request';
const METRICS_RESPONSE = 'json-utility:metrics-response';
const CLUSTER_METRICS_TIMEOUT_MS = 5_000;

interface MetricsMessage {
  type: string;
  id: number;
  text?: string;
  error?: string;
}

let nextRequestId = 0;
const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();

function askPrimaryForClusterMetrics(): Promise<string> {
  if (pending.size === 0) process.on('message', onPrimaryAnswer);
  const id = nextRequestId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => settle(id, new Error('the primary did not answer for the cluster metrics')), CLUSTER_METRICS_TIMEOUT_MS);
    pending.set(id, {
      resolve: (text) => (clearTimeout(timer), resolve(text)),
      reject: (error) => (clearTimeout(timer), reject(error)),
    });
    process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsMessage);
  });
}

function settle(id: number, outcome: string | Error): void {
  const waiting = pending.get(id);
  if (waiting === undefined) return;
  pending.delete(id);
  if (pending.size === 0) process.off('message', onPrimaryAnswer);
  if (outcome instanceof Error) waiting.reject(outcome);
  else waiting.resolve(outcome);
}

function onPrimaryAnswer(message: unknown): void {
  const answer = message as Partial<MetricsMessage>;
  if (answer?.type !== METRICS_RESPONSE || typeof answer.id !== 'number') return;
  settle(answer.id, answer.text ?? new Error(answer.error ?? 'no metrics'));
}

/**
 * In the primary: every worker's metrics, summed by prom-client's `AggregatorRegistry`, for the
 * admin port; with `relay` also sent to a worker scraped on the API port (no ADMIN_PORT).
 *
 * @example
 * const metrics = clusterMetrics(config.adminPort === 'off'); await metrics.text();
 */
export function clusterMetrics(relay: boolean): Pick<HttpMetrics, 'text' | 'contentType'> {
  const aggregator = new AggregatorRegistry();
  if (relay) {
    cluster.on('message', (worker, message: Partial<MetricsMessage>) => {
      if (message?.type !== METRICS_REQUEST || typeof message.id !== 'number') return;
      const id = message.id;
      aggregator.clusterMetrics().then(
        (text) => worker.send({ type: METRICS_RESPONSE, id, text } satisfies MetricsMessage),
        (error: Error) => worker.send({ type: METRICS_RESPONSE, id, error: error.message } satisfies MetricsMessage),
      );
    });
  }
  return { contentType: aggregator.contentType, text: () => aggregator.clusterMetrics() };
}
