// @ts-check
/** The baseline's request handler (server.mjs), shared with the features target (bench/node-http-features/). */

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
