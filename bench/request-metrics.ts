/**
 * The request metrics' update per request, in one process, alternating: prom-client's own counter,
 * histogram and operations counter updated by labels (what the service would do with prom-client's own metric types), against
 * the service's cells (http/observability/request-durations.ts), which resolve labels only at the scrape.
 * Both after the same label sets have been seen.
 *   npx tsx bench/request-metrics.ts   (npm run bench:metrics)
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { createHttpMetrics } from '../src/http/observability/metrics.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const LABELS = ['method', 'route', 'status'];
const registry = new Registry();
const requests = new Counter({ name: 'http_requests_total', help: 'h', labelNames: LABELS, registers: [registry] });
const durations = new Histogram({ name: 'http_request_duration_seconds', help: 'h', labelNames: LABELS, buckets: BUCKETS, registers: [registry] });
const operations = new Counter({ name: 'operations_total', help: 'h', labelNames: ['operation', 'status'], registers: [registry] });
const cells = createHttpMetrics();
// The label sets a warmed service has seen: each route with a few statuses.
for (const route of ['/api/isEven', '/api/isOdd/:number', '/api/sort', '/api/toString', '/api/batch', '/healthz', '/metrics', 'unmatched']) {
  for (const status of [200, 400, 404, 405, 413]) {
    requests.inc({ method: 'POST', route, status });
    durations.observe({ method: 'POST', route, status }, 0.001);
    cells.observe('POST', route, status, 0.001);
  }
}
const variants: Record<string, () => void> = {
  'prom-client by labels': () => {
    const labels = { method: 'POST', route: '/api/isEven', status: 200 };
    requests.inc(labels);
    durations.observe(labels, 0.0003);
    operations.inc({ operation: 'isEven', status: 200 }, 1);
  },
  'cells (the service)': () => {
    cells.observe('POST', '/api/isEven', 200, 0.0003);
    cells.countOperation('isEven', 200);
  },
};
const N = 1_000_000;
const micros: Record<string, number[]> = {};
for (let round = 0; round < 8; round++) {
  for (const [name, update] of Object.entries(variants)) {
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) update();
    const used = process.cpuUsage(start);
    if (round >= 2) (micros[name] ??= []).push((used.user + used.system) / N);
  }
}
for (const [name, values] of Object.entries(micros)) {
  const sorted = [...values].sort((a, b) => a - b);
  console.log(
    `${name}: median ${(sorted[Math.floor(sorted.length / 2)] as number).toFixed(3)} µs a request (${(sorted[0] as number).toFixed(3)}-${(sorted.at(-1) as number).toFixed(3)})`,
  );
}
