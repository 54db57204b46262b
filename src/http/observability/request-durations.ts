import type { Aggregator, Metric } from 'prom-client';

/**
 * `http_request_duration_seconds`, counted in cells and handed to prom-client as a metric of its
 * own. prom-client's Histogram resolves the labels at every `observe` (sort, hash, validate):
 * it costs a request many times what the cells do (`npm run bench:metrics` measures both). Its
 * public API has no way to give a histogram counts made elsewhere, so this file, and only this
 * file, builds the object its Registry and AggregatorRegistry read (what its Histogram's
 * `getForPromString` and `get` return). test/http/request-durations.test.ts compares the result
 * with prom-client's own Histogram, so that a prom-client that reads otherwise fails there.
 */

/** The latency buckets' upper bounds, in seconds (prom-client's defaults, with 0.5 ms first). */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const NAME = 'http_request_duration_seconds';
const HELP = 'Time from request to response';

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
 * updates numbers, and the labels are resolved (made into objects, hashed by prom-client) only when
 * `/metrics` is scraped.
 *
 * @example
 * const durations = new RequestDurations(); registry.registerMetric(durations.metric);
 * durations.observe('POST', '/api/sort', 200, 0.0004);
 */
export class RequestDurations {
  /** Every label set seen, in the order first seen. */
  readonly cells: RequestCell[] = [];
  private readonly byRoute = new Map<string, Map<number, Map<string, RequestCell>>>();
  /** The histogram, for a prom-client Registry. */
  readonly metric: Metric = histogramOf(this.cells);

  observe(method: string, route: string, status: number, seconds: number): void {
    let byStatus = this.byRoute.get(route);
    if (byStatus === undefined) this.byRoute.set(route, (byStatus = new Map<number, Map<string, RequestCell>>()));
    let byMethod = byStatus.get(status);
    if (byMethod === undefined) byStatus.set(status, (byMethod = new Map<string, RequestCell>()));
    let cell = byMethod.get(method);
    if (cell === undefined) {
      byMethod.set(method, (cell = new RequestCell({ method, route, status })));
      this.cells.push(cell);
    }
    cell.count++;
    cell.sum += seconds;
    const bucket = bucketOf(seconds);
    if (bucket >= 0) cell.buckets[bucket] = (cell.buckets[bucket] as number) + 1;
  }
}

/** One value as a Registry reads it: a bucket, the sum or the count, with its labels. */
interface ReadValue {
  readonly labels: object;
  readonly value: number;
  readonly metricName: string;
}

/**
 * What a prom-client Registry reads of a metric registered with it, as its Histogram gives
 * itself (prom-client's own type for it is not exported): checked with `satisfies` before the one
 * cast to `Metric`.
 */
interface RegisteredHistogram {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  readonly aggregator: Aggregator;
  getForPromString(): Promise<{ readonly values: ReadonlyArray<ReadValue & { readonly sharedLabels: object }> }>;
  get(): Promise<{
    readonly name: string;
    readonly help: string;
    readonly type: string;
    readonly aggregator: Aggregator;
    readonly values: readonly ReadValue[];
  }>;
  reset(): void;
}

/** The cells as prom-client's Histogram gives itself to a Registry: `getForPromString` for the text, `get` for JSON and the cluster's sum. */
function histogramOf(cells: readonly RequestCell[]): Metric {
  const values = () =>
    cells.flatMap((cell) => {
      let cumulative = 0;
      return [
        ...DURATION_BUCKETS.map((le, i) => ({
          labels: { le },
          sharedLabels: cell.labels,
          value: (cumulative += cell.buckets[i] as number),
          metricName: `${NAME}_bucket`,
        })),
        { labels: { le: '+Inf' }, sharedLabels: cell.labels, value: cell.count, metricName: `${NAME}_bucket` },
        { labels: {}, sharedLabels: cell.labels, value: cell.sum, metricName: `${NAME}_sum` },
        { labels: {}, sharedLabels: cell.labels, value: cell.count, metricName: `${NAME}_count` },
      ];
    });
  const described = { name: NAME, help: HELP, type: 'histogram', aggregator: 'sum' } as const;
  const metric = {
    ...described,
    getForPromString: () => Promise.resolve({ ...described, values: values() }),
    get: () =>
      Promise.resolve({
        ...described,
        values: values().map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...labels, ...sharedLabels }, value, metricName })),
      }),
    reset: () => undefined,
  } satisfies RegisteredHistogram;
  return metric as unknown as Metric;
}
