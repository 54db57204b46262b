// @ts-check
/**
 * One autocannon run in its own process (so that `taskset` can pin it apart from the server).
 * Argument: a JSON object { url, method, body?, bodyFile?, connections, seconds }.
 * Prints { requests, requestsPerSecond, p50Ms, p99Ms, errors, non2xx } as JSON.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2] ?? '{}');
const body = options.bodyFile === undefined ? undefined : readFileSync(options.bodyFile);
const result = await autocannon({
  url: options.url,
  method: options.method,
  connections: options.connections,
  duration: options.seconds,
  ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
});
process.stdout.write(
  JSON.stringify({
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / (result.duration || options.seconds),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  }),
);
