import type { FastifyInstance, onSendHookHandler } from 'fastify';

/**
 * Fixed headers on every response of the routes registered from now on whose path `headersFor`
 * gives headers for (their errors, 405s and OPTIONS answers included), through a route-level
 * hook: the other routes pay nothing for it.
 */
export function addRouteHeaders(app: FastifyInstance, headersFor: (path: string) => Readonly<Record<string, string>> | undefined): void {
  app.addHook('onRoute', (route) => {
    const headers = headersFor(route.url);
    if (headers === undefined) return;
    const setHeaders: onSendHookHandler = (_request, reply, payload, done) => {
      reply.headers(headers);
      done(null, payload);
    };
    route.onSend = [...[route.onSend ?? []].flat(), setHeaders];
  });
}
