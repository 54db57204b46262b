import type { FastifyInstance } from 'fastify';

/** The CORS origins a response names: any (`*`), a list, or none. */
export type CorsOrigins = readonly string[] | 'off';

export interface FixedHeaderOptions {
  /** Headers every response carries, worked out once (security headers). */
  readonly always: Readonly<Record<string, string>>;
  readonly corsOrigins: CorsOrigins;
  /** True from the start of shutdown: responses then ask clients to close the connection. */
  readonly shuttingDown: () => boolean;
}

// What a page on another origin may read of an answer besides the CORS-safelisted headers.
const EXPOSED = 'allow, retry-after, deprecation, link, sunset';

/**
 * The headers that depend on nothing but the request's id, its `Origin` and the process's state,
 * set in one hook when the request arrives: `x-request-id`, the security headers, CORS
 * (Fetch standard, "CORS protocol": the API takes no credentials, so `*` is safe and the
 * default), and `Connection: close` once shutdown has begun, so that clients reconnect elsewhere.
 * CORS preflight answers get their own headers from `preflightHeaders`.
 */
export function addFixedHeaders(app: FastifyInstance, options: FixedHeaderOptions): void {
  const { always, corsOrigins, shuttingDown } = options;
  const anyOrigin = corsOrigins !== 'off' && corsOrigins.includes('*');
  const allowed = new Set(corsOrigins === 'off' ? [] : corsOrigins);
  const withAnyOrigin = { ...always, 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED };
  const preflightWithAnyOrigin = { ...always, 'access-control-allow-origin': '*' };

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const origin = request.headers.origin;
    if (origin === undefined || corsOrigins === 'off') {
      reply.headers(always);
    } else {
      // A preflight's answer says what may be sent (preflightHeaders), not what may be read.
      const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
      if (anyOrigin) {
        reply.headers(preflight ? preflightWithAnyOrigin : withAnyOrigin);
      } else {
        reply.headers(always);
        reply.header('vary', 'Origin');
        if (allowed.has(origin)) reply.header('access-control-allow-origin', origin);
        if (allowed.has(origin) && !preflight) reply.header('access-control-expose-headers', EXPOSED);
      }
    }
    if (shuttingDown()) reply.header('connection', 'close');
    done();
  });
}

const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * The headers of an answer to a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`)
 * from an allowed origin: the methods the path takes, the headers asked for, how long to cache.
 */
export function preflightHeaders(
  corsOrigins: CorsOrigins,
  request: { headers: Record<string, string | string[] | undefined> },
  allow: string,
): Record<string, string> | undefined {
  const origin = request.headers.origin;
  if (corsOrigins === 'off' || typeof origin !== 'string' || request.headers['access-control-request-method'] === undefined) return undefined;
  if (!corsOrigins.includes('*') && !corsOrigins.includes(origin)) return undefined;
  const requested = request.headers['access-control-request-headers'];
  return {
    'access-control-allow-methods': allow,
    'access-control-allow-headers': typeof requested === 'string' ? requested : 'content-type',
    'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
  };
}
