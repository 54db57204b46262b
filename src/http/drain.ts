import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const inFlight = Symbol('requests in flight');
type TrackedSocket = Socket & { [inFlight]?: number };

/**
 * Makes closing the server wait for every response to reach the client whole.
 *
 * Node 20's `server.close()` calls `closeIdleConnections()`, which destroys a keep-alive socket
 * whose response has been ended but not yet flushed (a 7 MB sort response was seen cut off). This
 * replaces it on `server` with one that ends (never destroys) only sockets with no request in
 * flight, and ends each other socket once its last response has been flushed. Call once, before
 * the server listens; `isClosing()` tells the app to send `Connection: close` from then on.
 */
export function drainGracefully(server: Server): { isClosing: () => boolean } {
  const sockets = new Set<TrackedSocket>();
  let closing = false;

  server.on('connection', (socket: TrackedSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // One listener each for the server's life, no closure per request: the socket is found through the request.
  const responseClosed = function (this: ServerResponse) {
    const socket = this.req.socket as TrackedSocket;
    socket[inFlight] = (socket[inFlight] ?? 1) - 1;
    if (closing && socket[inFlight] === 0) socket.end();
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as TrackedSocket;
    socket[inFlight] = (socket[inFlight] ?? 0) + 1;
    // 'close' comes once the response is flushed, or the client went away.
    response.on('close', responseClosed);
  });

  server.closeIdleConnections = () => {
    closing = true;
    for (const socket of sockets) if ((socket[inFlight] ?? 0) === 0) socket.end();
  };
  return { isClosing: () => closing };
}
