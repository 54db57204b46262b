import type { FastifyRequest, onRequestHookHandler, preParsingHookHandler, preValidationHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Routes rewritten as they are added (Fastify's `onRoute`): what a route's config declares
 * (decorations.ts), made into the route options and hooks that Fastify and its plugins read. A
 * step whose hook concerns some routes alone adds it to them with `addRouteHook`; hooks for every
 * request read a route's config through `routeConfigOf`; allowed-methods.ts records routes without
 * changing them.
 */

interface RouteHooks {
  onRequest: onRequestHookHandler;
  preParsing: preParsingHookHandler;
  preValidation: preValidationHookHandler;
}

/**
 * Adds `hook` to a route's own hooks of a step, in an `onRoute` hook: after those it has, or
 * before them with `first`. Route hooks run after the app's hooks of the same step.
 *
 * @example
 * app.addHook('onRoute', (route) => addRouteHook(route, 'preParsing', decode));
 */
export function addRouteHook<Step extends keyof RouteHooks>(route: RouteOptions, step: Step, hook: RouteHooks[Step], place: 'first' | 'last' = 'last'): void {
  const own = [route[step] ?? []].flat() as Array<RouteHooks[Step]>;
  Object.assign(route, { [step]: place === 'first' ? [hook, ...own] : [...own, hook] });
}

/** A route's config as a request sees it: what decorations.ts declares, and Fastify's `url` and `method`. */
export type RouteConfig = FastifyRequest['routeOptions']['config'];

/**
 * The config of the request's route: `request.routeOptions` is a getter that builds a new object
 * of eleven fields at each read, so a hook of each route's own (route-config) reads it once for
 * the route and gives it to each of its requests; a request that has not run it (a 404, or one
 * answered by an earlier hook) reads it here. `url` is the route's pattern, undefined for a path
 * that is no route (a 404).
 *
 * @example
 * routeConfigOf(request).countsAs //=> 'isEven' on POST /api/isEven
 */
export function routeConfigOf(request: FastifyRequest): RouteConfig {
  return (request.routeConfig ??= request.routeOptions.config);
}

// Every answer of a route that may code its answers says so, coded or not (RFC 9110 §12.5.5), after any Vary already set (CORS's Origin).
const varyOnAcceptEncoding: onRequestHookHandler = (_request, reply, done) => {
  const vary = reply.getHeader('vary');
  reply.header('vary', vary === undefined ? 'accept-encoding' : `${String(vary)}, accept-encoding`);
  done();
};

/**
 * The `route-config` plugin. `config.codedAnswers: false` becomes @fastify/compress's route
 * option `compress: false` (answer-coding.ts, registered after this plugin, reads it), and the
 * routes whose GET or POST answers may be coded get a hook of their own that adds `Vary:
 * Accept-Encoding`: after the route's own onRequest hooks (a 405 answers before it, and goes
 * without) and before a rate limit's (protection.ts, registered after this plugin: a 429 carries it).
 * It decorates `request.routeConfig`, which the first hook of each route's own fills (`routeConfigOf`).
 *
 * @example
 * await app.register(routeConfig, { codesAnswers: true }); // before response-headers, answer-coding and protection
 */
export const routeConfig = fp<{ codesAnswers: boolean }>(
  async (app, { codesAnswers }) => {
    app.decorateRequest('routeConfig', undefined);
    app.addHook('onRoute', (route) => {
      // Fastify gives requests a copy of the route's config with its url and method: read through the first request.
      let config: RouteConfig | undefined;
      const knowConfig: onRequestHookHandler = (request, _reply, done) => {
        request.routeConfig = config ??= request.routeOptions.config;
        done();
      };
      addRouteHook(route, 'onRequest', knowConfig, 'first');
      if (route.config?.codedAnswers === false) {
        route.compress = false;
        return;
      }
      // Preflights and 405s (OPTIONS, the other methods) answer with no body.
      if (!codesAnswers || ![route.method].flat().some((method) => method === 'GET' || method === 'POST')) return;
      addRouteHook(route, 'onRequest', varyOnAcceptEncoding);
    });
  },
  { name: 'route-config', fastify: '5.x' },
);
