import type { FastifyInstance } from 'fastify';

const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * CORS (Fetch standard, "CORS protocol") for the listed origins, `['*']` for any, or off.
 * The API takes no credentials, so `*` is safe for a public utility and is the default.
 */
export function enableCors(app: FastifyInstance, origins: readonly string[] | 'off'): void {
  if (origins === 'off') return;
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);

  // A callback hook, not an async one: no promise per request for a header or two.
  app.addHook('onSend', (request, reply, payload, done) => {
    const origin = request.headers.origin;
    if (origin === undefined) return done(null, payload);
    if (anyOrigin) {
      reply.header('access-control-allow-origin', '*');
    } else {
      reply.header('vary', 'Origin');
      if (!allowed.has(origin)) return done(null, payload);
      reply.header('access-control-allow-origin', origin);
    }
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      const allow = reply.getHeader('allow');
      if (allow !== undefined) reply.header('access-control-allow-methods', allow);
      const requested = request.headers['access-control-request-headers'];
      reply.header('access-control-allow-headers', requested ?? 'content-type');
      reply.header('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS);
    } else {
      reply.header('access-control-expose-headers', 'allow, retry-after, deprecation, link, sunset');
    }
    done(null, payload);
  });
}
