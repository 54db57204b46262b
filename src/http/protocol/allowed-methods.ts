import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { problemOf } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { sendProblem } from '../problem-responses.js';
import { corsPreflight } from './response-headers.js';
import { ownHooks } from './route-config.js';

/** Path → the methods it is registered with and its routes' own headers (config.headers), filled by `onRoute` as routes are added. */
export type RouteTable = Map<string, { readonly methods: Set<string>; headers?: Readonly<Record<string, string>> }>;

// CONNECT never reaches routing (Node emits 'connect'); every other method Node parses gets an answer.
const ANSWERABLE_METHODS = METHODS.filter((method) => method !== 'CONNECT');

export function recordRoutes(app: FastifyInstance): RouteTable {
  const table: RouteTable = new Map();
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    const path = table.get(route.url) ?? { methods: new Set<string>() };
    for (const method of [route.method].flat()) path.methods.add(method);
    path.headers ??= route.config?.headers;
    table.set(route.url, path);
  });
  return table;
}

/**
 * For every recorded path: `OPTIONS` (204, and a CORS preflight's headers from @fastify/cors) and
 * 405 with an exact `Allow` header for every other method (RFC 9110 §15.5.6). Fastify alone
 * would answer 404. Both carry the path's own headers (a legacy route's). Call after all other
 * routes are registered; the routes go in `scope` (by default the app), where @fastify/cors may be
 * registered for them alone.
 */
export function answerOtherMethods(app: FastifyInstance, table: RouteTable, scope: FastifyInstance = app): void {
  for (const method of ANSWERABLE_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  for (const [url, { methods: registered, headers }] of [...table]) {
    const allowed = [...new Set([...registered, 'OPTIONS'])].sort();
    const allow = allowed.join(', ');
    // Each route its own array: a library may append to a route's hooks as it is added (@fastify/rate-limit).
    const own = () => ownHooks({ headers, codedAnswers: false }).onRequest ?? [];
    if (!registered.has('OPTIONS')) {
      scope.options(url, { onRequest: own(), schema: { hide: true }, config: corsPreflight(allow) }, async (_request, reply) =>
        reply.code(204).header('allow', allow).send(),
      );
    }
    const others = ANSWERABLE_METHODS.filter((method) => !allowed.includes(method)) as HTTPMethods[];
    // The path as the docs write it: `/api/isEven/{number}`, not the router's `:number`.
    const documented = url.replace(/:(\w+)/g, '{$1}');
    // Answered in onRequest, before any body is read or parsed: the method alone decides.
    const refuse = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.header('allow', allow);
      return sendProblem(reply, problemOf(405, LIMIT_TEXTS.methodNotAllowed(request.method, documented, allow)));
    };
    scope.route({ method: others, url, schema: { hide: true }, onRequest: [...own(), refuse], handler: refuse });
  }
}
