import type { FastifyReply, FastifyRequest } from 'fastify';
import etag from 'etag';
import fresh from 'fresh';

import { JSON_CONTENT_TYPE } from './json-body.js';

/**
 * HTTP caching (RFC 9111), docs/operations.md "Caches and CDNs". A GET operation's 200 is a pure
 * function of its URL, the same for as long as the path is served: any cache may keep it for a year
 * and need never revalidate it (RFC 8246). Everything else the service answers depends on settings,
 * load or time (a limit's 4xx, 429, 503, 5xx, probes, /metrics) and carries `NO_STORE`, which the
 * response-headers hook writes on every answer before a cacheable one overrides it.
 */
export const NO_STORE = 'no-store';
const FOREVER = 'public, max-age=31536000, immutable';

// The tags of the answers sent so far: a GET operation has a few distinct answers (`{"ret":true}`
// and `{"ret":false}`), so each is hashed once. Bounded, in case an operation has more.
const TAGS = new Map<string, string>();
const MAX_TAGS = 64;

/** A strong entity tag for `text`, a hash of its bytes (etag, https://github.com/jshttp/etag). */
function tagOf(text: string): string {
  let tag = TAGS.get(text);
  if (tag === undefined) {
    tag = etag(text);
    if (TAGS.size < MAX_TAGS) TAGS.set(text, tag);
  }
  return tag;
}

/**
 * Sends `text`, the JSON answer to a GET of a pure operation, as a cacheable 200 with its strong
 * ETag, or a 304 with no body when the request's `If-None-Match` names that tag (RFC 9110 §13.1.2,
 * by fresh, https://github.com/jshttp/fresh). HEAD gets the same headers (Fastify runs this for it).
 *
 * @example
 * return sendCacheable(request, reply, '{"ret":true}'); // 200, Cache-Control: public, max-age=31536000, immutable; ETag: "c-…"
 */
export function sendCacheable(request: FastifyRequest, reply: FastifyReply, text: string): FastifyReply {
  const headers = { 'cache-control': FOREVER, etag: tagOf(text) };
  reply.headers(headers);
  if (fresh(request.headers, headers)) return reply.code(304).send();
  return reply.type(JSON_CONTENT_TYPE).send(text);
}
