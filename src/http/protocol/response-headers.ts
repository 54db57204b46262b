import type { FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import fp from 'fastify-plugin';

/** The CORS origins a response names: any (`*`), a list, or none. */
export type CorsOrigins = readonly string[] | 'off';

export interface ResponseHeaderOptions {
  /** Headers every response carries, worked out once (security headers, fixed CORS headers). */
  readonly always: Readonly<Record<string, string>>;
  /** True once the app is no longer ready (shutdown has begun): responses then ask clients to close the connection, as they do once the server closes. */
  readonly shuttingDown: () => boolean;
}

// What a page on another origin may read of an answer besides the CORS-safelisted headers.
const EXPOSED = 'allow, retry-after, deprecation, link, sunset, etag';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * The `response-headers` plugin: the service's own response headers, set as the request arrives,
 * so that every answer has them, errors included: in one hook for every request, `x-request-id`,
 * `always` (security headers, fixed CORS headers) and `Connection: close` once shutdown has begun
 * (clients then reconnect elsewhere). A route's own headers and `Vary: Accept-Encoding` come from
 * hooks in its options (route-config.ts: `ownHooks`). Libraries add theirs: @fastify/cors with a list of
 * origins, the docs page's helmet, @fastify/compress `Content-Encoding`; an answer its own
 * (`Allow`, `Retry-After`).
 *
 * @example
 * await app.register(responseHeaders, { always: API_HEADERS, shuttingDown: () => false }); // after connections
 */
export const responseHeaders = fp<ResponseHeaderOptions>(
  async (app, options) => {
    const { always, shuttingDown } = options;
    const { connections } = app;
    app.addHook('onRequest', function serviceHeaders(request, reply, done) {
      reply.header('x-request-id', request.id);
      reply.headers(always);
      if (shuttingDown() || connections.isClosing()) reply.header('connection', 'close');
      done();
    });
  },
  {
    name: 'response-headers',
    fastify: '5.x',
    dependencies: ['connections'],
    decorators: { fastify: ['connections'] },
  },
);

/**
 * The CORS headers every answer carries whatever the request, when the origins are `*`: then they
 * are fixed, and the one hook of `responseHeaders` writes them with the others, instead of
 * @fastify/cors working them out for every request (it is then registered only where preflights
 * are answered: `allowOrigins`). Undefined when they depend on the request's `Origin` (a list) or
 * there are none (`off`).
 *
 * @example
 * fixedCorsHeaders(['*']) //=> { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'allow, …' }
 */
export function fixedCorsHeaders(corsOrigins: CorsOrigins): Readonly<Record<string, string>> | undefined {
  if (corsOrigins === 'off' || !corsOrigins.includes('*')) return undefined;
  // What @fastify/cors writes on an answer with `origin: '*'`, in its order.
  return { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED };
}

/**
 * CORS by @fastify/cors (Fetch standard, "CORS protocol": the API takes no credentials, so `*` is
 * safe and the default); a preflight is answered only on a path that exists, with that path's
 * methods (`corsPreflight`). Register after the error and not-found handlers: the
 * OPTIONS route it adds keeps the handlers of the moment it is added. With fixed headers
 * (`fixedCorsHeaders`), register it in the scope of the OPTIONS routes alone.
 *
 * @example
 * await allowOrigins(app, ['https://app.example']); // that origin's pages may call the API
 */
export async function allowOrigins(app: FastifyInstance, corsOrigins: CorsOrigins): Promise<void> {
  if (corsOrigins === 'off') return;
  await app.register(cors, {
    origin: corsOrigins.includes('*') ? '*' : [...corsOrigins],
    exposedHeaders: EXPOSED,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // Preflights only where a route enables them (corsPreflight): elsewhere OPTIONS is a 404 problem, not an empty 200.
    preflight: false,
    // A plain OPTIONS is answered by the path's own route (204 with Allow), not refused as a bad preflight.
    strictPreflight: false,
    preflightContinue: true,
  });
}

/**
 * The route config of a path's OPTIONS route: CORS preflights answered with the methods it takes.
 *
 * @example
 * app.options('/api/sort', { config: corsPreflight('OPTIONS, POST') }, handler);
 */
export const corsPreflight = (allow: string) => ({ cors: { preflight: true, methods: allow } });
