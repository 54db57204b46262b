// @ts-check
/**
 * A loopback OTLP/HTTP receiver for the traced targets of `npm run bench`: it reads each export
 * request whole and answers 200 with an empty body, as a collector that accepts everything does.
 * It runs in a process of its own (beside the load generator, not on the server's CPU), so that
 * what the service spends on exporting is the service's and what the receiver spends is not.
 * It counts what it was sent and prints the counts when stopped.
 */
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;
const server = createServer((request, response) => {
  request.on('data', (/** @type {Buffer} */ chunk) => (bytes += chunk.length));
  request.on('end', () => {
    exports++;
    const json = request.headers['content-type'] === 'application/json';
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`otlp receiver listening on http://${address.address}:${address.port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT'])
  process.on(signal, () => {
    process.stdout.write(`otlp receiver: ${exports} export requests, ${bytes} bytes\n`);
    process.exit(0);
  });
