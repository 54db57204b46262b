import cluster from 'node:cluster';
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
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

/** Where a request was when its client went away: sending its body, waiting for the answer, or taking it. */
export type ClientGoneStage = 'upload' | 'waiting' | 'answer';

export interface HttpMetrics {
  /** Adds a metric of another part of the service to this registry. */
  register(metric: Metric): void;
  observe(method: string, route: string | undefined, status: number, seconds: number): void;
  /** Counts `n` answers of an operation with this status, in a single request, a batch or a stream. */
  countOperation(operation: string, status: number | string, n?: number): void;
  /** Counts a request whose client went away before its answer was flushed whole, by the stage it had reached. */
  countClientGone(stage: ClientGoneStage): void;
  /** The exposition text: this process's, or in a cluster worker every worker's, summed. */
  text(): Promise<string>;
  readonly contentType: string;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The first bucket whose bound holds `seconds`, or -1 above the last (prom-client's `findBound`). */
function bucketOf(seconds: number): number {
  for (let i = 0; i < DURATION_BUCKETS.length; i++) if (seconds <= (DURATION_BUCKETS[i] as number)) return i;
  return -1;
}

/** One label set of the request metrics: its count, its latencies' sum and its histogram, updated in place. */
class RequestCell {
  count = 0;
  sum = 0;
  /** Per bucket, not cumulative; a latency above the last bound is in `count` alone (`+Inf`). */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length);
  constructor(readonly labels: Readonly<{ method: string; route: string; status: number }>) {}
}

/**
 * The request metrics' cells, found by their labels' values through nested maps: a request
 * updates numbers, and the labels are resolved (hashed, validated, made into objects) only when
 * `/metrics` is scraped. prom-client resolves them at every `inc` and `observe`, and its `inc`
 * also copies every label set's value into a new array.
 */
class RequestCells {
  readonly all: RequestCell[] = [];
  private readonly byRoute = new Map<string, Map<number, Map<string, RequestCell>>>();

  cell(method: string, route: string, status: number): RequestCell {
    let byStatus = this.byRoute.get(route);
    if (byStatus === undefined) this.byRoute.set(route, (byStatus = new Map<number, Map<string, RequestCell>>()));
    let byMethod = byStatus.get(status);
    if (byMethod === undefined) byStatus.set(status, (byMethod = new Map<string, RequestCell>()));
    let cell = byMethod.get(method);
    if (cell === undefined) {
      byMethod.set(method, (cell = new RequestCell({ method, route, status })));
      this.all.push(cell);
    }
    return cell;
  }
}

/**
 * `http_request_duration_seconds` from the cells, as prom-client's own Histogram writes it (its
 * `getForPromString` and `get`, the shape its Registry and AggregatorRegistry read).
 */
function durationHistogram(cells: RequestCells): Metric {
  const name = 'http_request_duration_seconds';
  const help = 'Time from request to response';
  const values = () =>
    cells.all.flatMap((cell) => {
      let cumulative = 0;
      return [
        ...DURATION_BUCKETS.map((le, i) => ({
          labels: { le },
          sharedLabels: cell.labels,
          value: (cumulative += cell.buckets[i] as number),
          metricName: `${name}_bucket`,
        })),
        { labels: { le: '+Inf' }, sharedLabels: cell.labels, value: cell.count, metricName: `${name}_bucket` },
        { labels: {}, sharedLabels: cell.labels, value: cell.sum, metricName: `${name}_sum` },
        { labels: {}, sharedLabels: cell.labels, value: cell.count, metricName: `${name}_count` },
      ];
    });
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    getForPromString: () => Promise.resolve({ name, help, type: 'histogram', aggregator: 'sum', values: values() }),
    get: () =>
      Promise.resolve({
        name,
        help,
        type: 'histogram',
        aggregator: 'sum',
        values: values().map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...labels, ...sharedLabels }, value, metricName })),
      }),
    reset: () => undefined,
  };
  return metric as unknown as Metric;
}

/**
 * The request and operation metrics of one app, with the process's own.
 *
 * @example
 * const metrics = createHttpMetrics(); metrics.observe('POST', '/api/sort', 200, 0.0004); await metrics.text();
 */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  const cells = new RequestCells();
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const cell of cells.all) this.inc(cell.labels, cell.count);
    },
  });
  registry.registerMetric(durationHistogram(cells));
  // operation → status → how many: labels resolved at the scrape, as for the cells above.
  type OperationCount = { readonly labels: { operation: string; status: string }; n: number };
  const operationCounts = new Map<string, Map<string, OperationCount>>();
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
    observe(method, route, status, seconds) {
      const cell = cells.cell(method, route ?? UNMATCHED_ROUTE, status);
      cell.count++;
      cell.sum += seconds;
      const bucket = bucketOf(seconds);
      if (bucket >= 0) cell.buckets[bucket] = (cell.buckets[bucket] ?? 0) + 1;
    },
    countOperation(operation, answered, n = 1) {
      // A batch's tally gives the status as text, a single request as a number: one label value either way.
      const status = String(answered);
      let byStatus = operationCounts.get(operation);
      if (byStatus === undefined) operationCounts.set(operation, (byStatus = new Map<string, OperationCount>()));
      const count = byStatus.get(status);
      if (count === undefined) byStatus.set(status, { labels: { operation, status }, n });
      else count.n += n;
    },
    countClientGone: (stage) => clientsGone.inc({ stage }),
    async text() {
      if (cluster.isWorker && process.send !== undefined) return askPrimaryForClusterMetrics();
      return Registry.merge(registries).metrics();
    },
  };
}
