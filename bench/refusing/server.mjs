// @ts-check
/**
 * For `npm run bench:overload`: a server that refuses every request at once, 503 with
 * `Retry-After` and `Connection: close`, its body read and discarded, on bare `node:http`. Offered a
 * step's rate on the service's CPU, it tells whether the generator alone can offer that rate on
 * this machine: callers that time out even here, or wait for a refusal, are the generator's limit.
 */
import { createServer } from 'node:http';

const server = createServer((request, response) => {
  request.resume();
  response.writeHead(503, { 'retry-after': '1', connection: 'close', 'content-length': 0 });
  response.end();
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`refusing listening on http://${address.address}:${address.port}\n`);
});
process.on('SIGTERM', () => server.close());
