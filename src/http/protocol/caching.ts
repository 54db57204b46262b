import type { FastifyReply, FastifyRequest } from 'fastify';
import etag from 'etag';
import fresh from 'fresh';

import { JSON_CONTENT_TYPE } from './json-body.js';

/**
 * HTTP caching (RFC 9111), docs/operations.md "Caches and CDNs". A GET operation's 200 is a pure
 * function of its URL, the same for as long as the path is served: any cache may keep it for a year
 * and need never revalidate it (RFC 8246). What depends on settings, load or time and a cache might
 * keep carries `NO_STORE`: every problem (sendProblem), the probes and /metrics. POST answers carry
 * nothing: no cache keeps them without explicit freshness (RFC 9111 §2).
 */
export const NO_STORE = 'no-store';
const FOREVER = 'public, max-age=31536000, immutable';

// The headers of the answers sent so far: a GET operation has a few distinct answers (`{"ret":true}`
// and `{"ret":false}`), so each is hashed once. Bounded, in case an operation has more.
const HEADERS = new Map<string, Readonly<Record<'cache-control' | 'etag', string>>>();
const MAX_ANSWERS = 64;

/** `text`'s caching headers: its strong entity tag is a hash of its bytes (etag, https://github.com/jshttp/etag). */
function headersOf(text: string): Readonly<Record<'cache-control' | 'etag', string>> {
  let headers = HEADERS.get(text);
  if (headers === undefined) {
    headers = { 'cache-control': FOREVER, etag: etag(text) };
    if (HEADERS.size < MAX_ANSWERS) HEADERS.set(text, headers);
  }
  return headers;
}

/**
 * Sends `text`, the JSON answer to a GET of a pure operation, as a cacheable 200 with its strong
 * ETag, or a 304 with no body when the request's `If-None-Match` names that tag (RFC 9110 §13.1.2,
 * by fresh, https://github.com/jshttp/fresh). HEAD gets the same headers (Fastify runs this for it).
 * fresh is given `If-None-Match` alone: it takes a request's `Cache-Control: no-cache` for a reload
 * and answers it whole, but that directive asks caches to validate with the origin, which this is,
 * and fetch (Node's and browsers') adds it to every request that sets `If-None-Match` itself.
 *
 * @example
 * return sendCacheable(request, reply, '{"ret":true}'); // 200, Cache-Control: public, max-age=31536000, immutable; ETag: "c-…"
 */
export function sendCacheable(request: FastifyRequest, reply: FastifyReply, text: string): FastifyReply {
  const headers = headersOf(text);
  reply.header('cache-control', headers['cache-control']).header('etag', headers.etag);
  const tag = request.headers['if-none-match'];
  if (tag !== undefined && fresh({ 'if-none-match': tag }, headers)) return reply.code(304).send();
  return reply.type(JSON_CONTENT_TYPE).send(text);
}
