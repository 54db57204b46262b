import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { DURATION_BUCKETS, RequestDurations } from '../../src/http/observability/request-durations.js';

// The one place the service hands prom-client a metric it did not make (request-durations.ts):
// these fail when prom-client reads its registered metrics otherwise than today.

const OBSERVED: [method: string, route: string, status: number, seconds: number][] = [
  ['GET', '/api/isEven/:number', 200, 0.0003],
  ['GET', '/api/isEven/:number', 200, 0.0005],
  ['GET', '/api/isEven/:number', 200, 0.004],
  ['POST', '/api/sort', 200, 0.02],
  ['POST', '/api/sort', 413, 7],
  ['GET', 'unmatched', 404, 0.0001],
  ['POST', '/api/sort', 200, 2.5],
];

/** The same observations in the service's cells and in prom-client's own Histogram, each in a registry of its own. */
function both(): { service: Registry; library: Registry } {
  const service = new Registry();
  const durations = new RequestDurations();
  service.registerMetric(durations.metric);
  const library = new Registry();
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response',
    labelNames: ['method', 'route', 'status'],
    buckets: DURATION_BUCKETS,
    registers: [library],
  });
  for (const [method, route, status, seconds] of OBSERVED) {
    durations.observe(method, route, status, seconds);
    histogram.observe({ method, route, status }, seconds);
  }
  return { service, library };
}

const sortedLines = (text: string): string[] => text.split('\n').filter(Boolean).sort();

test('request durations: the exposition text is prom-client Histogram’s, line for line', async () => {
  const { service, library } = both();
  const text = await service.metrics();
  assert.deepEqual(sortedLines(text), sortedLines(await library.metrics()));
  assert.match(text, /^http_request_duration_seconds_bucket\{le="0.0005",method="GET",route="\/api\/isEven\/:number",status="200"\} 2$/m);
  assert.match(text, /^http_request_duration_seconds_count\{method="POST",route="\/api\/sort",status="413"\} 1$/m);
});

test('request durations: as JSON and summed over a cluster (AggregatorRegistry) they are prom-client Histogram’s', async () => {
  const { service, library } = both();
  const serviceJson = await service.getMetricsAsJSON();
  const libraryJson = await library.getMetricsAsJSON();
  const byLabels = (values: { labels: object; value: number; metricName?: string }[]) =>
    values.map((v) => JSON.stringify([v.metricName, Object.entries(v.labels).sort(), v.value])).sort();
  assert.deepEqual(byLabels(serviceJson[0]!.values), byLabels(libraryJson[0]!.values));
  // Two workers with the same observations: every count doubles, in either case.
  const summed = await AggregatorRegistry.aggregate([serviceJson, serviceJson]).metrics();
  assert.deepEqual(sortedLines(summed), sortedLines(await AggregatorRegistry.aggregate([libraryJson, libraryJson]).metrics()));
  assert.match(summed, /^http_request_duration_seconds_count\{method="GET",route="\/api\/isEven\/:number",status="200"\} 6$/m);
});
