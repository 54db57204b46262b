// @ts-check
/**
 * The baseline for `npm run bench`: the benchmark's routes on bare `node:http`, doing the least
 * work Node can do per request: read the body, JSON.parse, answer with JSON.stringify, sort an
 * all-number array as a Float64Array. No validation beyond what keeps it from throwing, no
 * logging, no headers but the two HTTP needs. It is a yardstick, not a correct service: parity
 * of a body number uses the double (wrong past 2^53) and toString is not canonical.
 */
import { createServer } from 'node:http';
import { handle } from './handler.mjs';

const server = createServer(handle);
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`baseline listening on http://${address.address}:${address.port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
