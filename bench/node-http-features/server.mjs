// @ts-check
/**
 * The bare node:http baseline (bench/baseline/server.mjs) plus what the service does on every
 * request at its defaults, each part switched by FEATURES (a comma-separated list; `none` for
 * none), so that the cost of each is one run. Unset, FEATURES is what the service does by default
 * (`id,headers,cors,metrics,operations`): with ACCESS_LOG=minimal it writes no line per request,
 * so the featured floor writes none either; `log` adds one.
 *
 *   id          a request id (`ID=uuid` for crypto.randomUUID, else a per-process prefix and a counter)
 *   headers     x-request-id and the security headers, written with the answer
 *   cors        the two CORS headers the service sends on every answer (CORS_ORIGINS=*)
 *   metrics     a prom-client counter and histogram by method, route and status
 *   operations  prom-client's operations_total by operation and status
 *   log         one pino line per request, to stdout through sonic-boom's own 4 KiB buffer (the service's ACCESS_LOG=all, with pino's usual buffering)
 *
 *   FEATURES=id,headers node bench/node-http-features/server.mjs
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import pino from 'pino';
import { Counter, Histogram, Registry } from 'prom-client';
import { handle } from '../baseline/server.mjs';

const features = new Set((process.env.FEATURES ?? 'id,headers,cors,metrics,operations').split(',').filter((name) => name !== 'none'));
const prefix = randomBytes(9).toString('base64url');
let counter = 0;
const newId = process.env.ID === 'uuid' ? () => randomUUID() : () => `${prefix}-${(++counter).toString(36)}`;
const SECURITY = { 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" };
const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'allow, retry-after, deprecation, link, sunset' };
const log = pino({ level: 'info' }, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }));
const registry = new Registry();
const requests = new Counter({ name: 'http_requests_total', help: 'requests', labelNames: ['method', 'route', 'status'], registers: [registry] });
const duration = new Histogram({ name: 'http_request_duration_seconds', help: 'latency', labelNames: ['method', 'route', 'status'], registers: [registry] });
const operations = new Counter({ name: 'operations_total', help: 'operations', labelNames: ['operation', 'status'], registers: [registry] });

const server = createServer((request, response) => {
  const started = process.hrtime.bigint();
  const id = features.has('id') ? newId() : undefined;
  if (features.has('headers')) {
    if (id !== undefined) response.setHeader('x-request-id', id);
    for (const [name, value] of Object.entries(SECURITY)) response.setHeader(name, value);
  }
  if (features.has('cors')) for (const [name, value] of Object.entries(CORS)) response.setHeader(name, value);
  if (features.has('log') || features.has('metrics') || features.has('operations')) {
    response.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route = /** @type {string} */ (request.url).replace(/\/[^/]+$/, (last) => (/^\/(isEven|isOdd|sort|toString)$/.test(last) ? last : '/:number'));
      const labels = { method: /** @type {string} */ (request.method), route, status: String(response.statusCode) };
      if (features.has('metrics')) {
        requests.inc(labels);
        duration.observe(labels, ms / 1000);
      }
      if (features.has('operations')) operations.inc({ operation: route.split('/')[2] ?? '', status: String(response.statusCode) });
      if (features.has('log')) log.info({ requestId: id, method: request.method, url: request.url, route, status: response.statusCode, ms }, 'request');
    });
  }
  handle(request, response);
});

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`node-http-features (${[...features].join(',') || 'none'}) listening on http://${address.address}:${address.port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => (log.flush(), process.exit(0)));
