import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { lingeringDestroySoon, type LingerLimits } from './lingering-close.js';

const inFlight = Symbol('requests in flight');
const lastRequest = Symbol('last request');
type TrackedSocket = Socket & { [inFlight]?: number; [lastRequest]?: IncomingMessage };

/**
 * Looks after the server's connections, with no work per request beyond a counter:
 *
 * - Closing the server waits for every response to reach the client whole. Node's
 *   `server.close()` calls `closeIdleConnections()`, which destroys a keep-alive socket whose
 *   response has been ended but not yet flushed (a 7 MB sort response was seen cut off). This
 *   replaces it with one that ends (never destroys) only sockets with no request in flight, and
 *   ends each other socket once its last response has been flushed.
 * - A connection closed after an answer sent before the body arrived lingers first
 *   (lingering-close.ts).
 * - A socket ended at shutdown that the client never closes on its side (a client that keeps its
 *   half open, a peer gone without a FIN or a reset, as after a flood of connections) is destroyed
 *   after `lingerMs`: Node's server closes only once every socket has, and such a socket would
 *   hold the exit until SHUTDOWN_TIMEOUT_MS.
 *
 * Call once, before the server listens; `isClosing()` tells the app to send `Connection: close`.
 */
export function manageConnections(server: Server, linger: LingerLimits): { isClosing: () => boolean } {
  const sockets = new Set<TrackedSocket>();
  let closing = false;
  const destroySoon = lingeringDestroySoon(linger, (socket) => (socket as TrackedSocket)[lastRequest]);
  const end = (socket: Socket): void => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), linger.lingerMs).unref();
    socket.once('close', () => clearTimeout(timer));
  };

  server.on('connection', (socket: TrackedSocket) => {
    sockets.add(socket);
    socket.destroySoon = destroySoon;
    socket.once('close', () => sockets.delete(socket));
  });
  // One listener each for the server's life, no closure per request: the socket is found through the request.
  const responseClosed = function (this: ServerResponse) {
    const socket = this.req.socket as TrackedSocket;
    socket[inFlight] = (socket[inFlight] ?? 1) - 1;
    if (closing && socket[inFlight] === 0) end(socket);
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as TrackedSocket;
    socket[inFlight] = (socket[inFlight] ?? 0) + 1;
    socket[lastRequest] = request;
    // 'close' comes once the response is flushed, or the client went away.
    response.on('close', responseClosed);
  });

  server.closeIdleConnections = () => {
    closing = true;
    for (const socket of sockets) if ((socket[inFlight] ?? 0) === 0) end(socket);
  };
  return { isClosing: () => closing };
}
