import type { Server } from 'node:http';
import type { Socket } from 'node:net';

const inFlight = Symbol('requests in flight');
type TrackedSocket = Socket & { [inFlight]?: number };

/**
 * Makes closing the server wait for every response to reach the client whole.
 *
 * Node 20's `server.close()` calls `closeIdleConnections()`, which destroys a keep-alive socket
 * whose response has been ended but not yet flushed (STACK.md: a 7 MB sort response was cut). This
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
  server.on('request', (request: { socket: TrackedSocket }, response: { once(event: 'close', listener: () => void): unknown }) => {
    const socket = request.socket;
    socket[inFlight] = (socket[inFlight] ?? 0) + 1;
    // 'close' comes once the response is flushed, or the client went away.
    response.once('close', () => {
      socket[inFlight] = (socket[inFlight] ?? 1) - 1;
      if (closing && socket[inFlight] === 0) socket.end();
    });
  });

  server.closeIdleConnections = () => {
    closing = true;
    for (const socket of sockets) if ((socket[inFlight] ?? 0) === 0) socket.end();
  };
  return { isClosing: () => closing };
}
