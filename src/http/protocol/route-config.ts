import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';

/** A route's config as a request sees it: what decorations.ts declares, and Fastify's `url` and `method`. */
export type RouteConfig = FastifyRequest['routeOptions']['config'];

/**
 * The config of the request's route, read once a request: `request.routeOptions` is a getter that
 * builds a new object of eleven fields at each read. `url` is the route's pattern, undefined for a
 * path that is no route (a 404).
 *
 * @example
 * routeConfigOf(request).countsAs //=> 'isEven' on POST /api/isEven
 */
export function routeConfigOf(request: FastifyRequest): RouteConfig {
  return (request.routeConfig ??= request.routeOptions.config);
}

/**
 * Every answer of a route that may code its answers says so, coded or not (RFC 9110 §12.5.5),
 * after any Vary already set (CORS's Origin). For routes a library adds (the docs page's), as a
 * hook of their context; others declare it in their options (`ownHooks`).
 *
 * @example
 * docs.addHook('onRequest', varyOnAcceptEncoding); // answers say Vary: accept-encoding
 */
export const varyOnAcceptEncoding: onRequestHookHandler = (_request, reply, done) => {
  const vary = reply.getHeader('vary');
  reply.header('vary', vary === undefined ? 'accept-encoding' : `${String(vary)}, accept-encoding`);
  done();
};

/** What a route's own onRequest hooks depend on. */
export interface OwnHooks {
  /** Headers every answer of the route carries, its errors and a 405 included (its `config.headers`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** True where the route's answers may be compressed: COMPRESS_MIN_BYTES is not off, and the route's config does not say `codedAnswers: false`. */
  readonly codedAnswers: boolean;
}

/**
 * A route's own onRequest hooks, for its options: its headers, then `Vary: Accept-Encoding` where
 * its answers may be coded. They run after the app-wide onRequest hooks (not on an answer those
 * give, a 503 of overload control, which `sendProblem` gives the route's headers) and before any
 * a library adds to the route as it is added (@fastify/rate-limit: its 429 carries them).
 *
 * @example
 * app.post('/api/sort', { ...ownHooks({ codedAnswers: true }), config }, handler); // answers say Vary: accept-encoding
 */
export function ownHooks({ headers, codedAnswers }: OwnHooks): { onRequest?: onRequestHookHandler[] } {
  const hooks: onRequestHookHandler[] = [];
  if (headers !== undefined) {
    const routeHeaders: onRequestHookHandler = (_request, reply, done) => {
      reply.headers(headers);
      done();
    };
    hooks.push(routeHeaders);
  }
  if (codedAnswers) hooks.push(varyOnAcceptEncoding);
  return hooks.length === 0 ? {} : { onRequest: hooks };
}

/**
 * The `route-config` plugin: a route's `config.codedAnswers: false` becomes @fastify/compress's
 * route option `compress: false` (answer-coding.ts, registered after this plugin, reads it), as
 * the route is added (Fastify's `onRoute`, which adds no hook). It decorates
 * `request.routeConfig`, which `routeConfigOf` fills.
 *
 * @example
 * await app.register(routeConfig); // before answer-coding
 */
export const routeConfig = fp(
  async (app) => {
    app.decorateRequest('routeConfig', undefined);
    app.addHook('onRoute', (route) => {
      if (route.config?.codedAnswers === false) route.compress = false;
    });
  },
  { name: 'route-config', fastify: '5.x' },
);
