// @ts-check
/**
 * The baseline for `npm run bench`: the benchmark's routes on bare `node:http`, doing the least
 * work Node can do per request: read the body, JSON.parse, answer with JSON.stringify, sort an
 * all-number array as a Float64Array. No validation beyond what keeps it from throwing, no
 * logging, no headers but the two HTTP needs. It is a yardstick, not a correct service: parity
 * of a body number uses the double (wrong past 2^53) and toString is not canonical.
 */
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

/** @param {import('node:http').ServerResponse} response @param {number} status @param {string} body */
function send(response, status, body) {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

/** @param {unknown} value */
const isInteger = (value) => typeof value === 'number' && Number.isInteger(value);

/** @param {string} text @param {boolean} even */
function parityOfText(text, even) {
  if (!/^-?\d+$/.test(text)) return undefined;
  const lastDigitEven = (text.charCodeAt(text.length - 1) & 1) === 0;
  return lastDigitEven === even;
}

/** @param {unknown[]} values */
function sortedJson(values) {
  if (values.every((value) => typeof value === 'number')) {
    return `{"sortedArray":[${Float64Array.from(/** @type {number[]} */ (values))
      .sort()
      .join(',')}]}`;
  }
  return JSON.stringify({ sortedArray: values.slice().sort() });
}

/** @type {Record<string, (input: any) => string | undefined>} */
const POST_ROUTES = {
  '/api/isEven': (input) => (isInteger(input) ? `{"ret":${input % 2 === 0}}` : undefined),
  '/api/isOdd': (input) => (isInteger(input) ? `{"ret":${input % 2 !== 0}}` : undefined),
  '/api/sort': (input) => (Array.isArray(input) ? sortedJson(input) : undefined),
  '/api/toString': (input) => JSON.stringify({ ret: typeof input === 'string' ? input : JSON.stringify(input) }),
};

/**
 * Answers one request of the benchmark's routes (the features target reuses it).
 * @param {import('node:http').IncomingMessage} request @param {import('node:http').ServerResponse} response
 */
export function handle(request, response) {
  const url = request.url ?? '/';
  if (request.method === 'GET') {
    const match = /^\/api\/(isEven|isOdd)\/([^/?]+)$/.exec(url);
    const ret = match ? parityOfText(decodeURIComponent(/** @type {string} */ (match[2])), match[1] === 'isEven') : undefined;
    return ret === undefined ? send(response, 404, '{"error":"not found"}') : send(response, 200, `{"ret":${ret}}`);
  }
  const answer = request.method === 'POST' ? POST_ROUTES[url] : undefined;
  if (answer === undefined) return send(response, 404, '{"error":"not found"}');
  /** @type {Buffer[]} */
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(response, 400, '{"error":"invalid JSON"}');
    }
    const json = answer(body?.input);
    if (json === undefined) send(response, 400, '{"error":"bad input"}');
    else send(response, 200, json);
  });
}

// Run as a target (not imported by the features target, bench/node-http-features/, for `handle`).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = createServer(handle);
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const address = /** @type {import('node:net').AddressInfo} */ (server.address());
    process.stdout.write(`baseline listening on http://${address.address}:${address.port}\n`);
  });
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
}
