import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

export interface LingerLimits {
  /** Longest the rest of the body is read after the answer. */
  readonly lingerMs: number;
  /** Most bytes read after the answer. */
  readonly lingerBytes: number;
}

const CHECK_INTERVAL_MS = 100;
const closeAtOnce = Socket.prototype.destroySoon;

/** True while part of the request's body has not arrived yet. */
export function hasUnreadBody(request: IncomingMessage): boolean {
  if (request.complete) return false;
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
}

/**
 * Lingering close (RFC 9112 §9.6): when the service answers before it has read the whole body
 * (413, 503, any early error) and closes the connection, closing at once would make the client's
 * kernel reset it while the client is still uploading, and the answer would be lost with it.
 * Node closes a connection with `destroySoon()` once the last answer is written; the function
 * this returns, set as a socket's `destroySoon`, first lets the rest of the body of `requestOf`
 * (the socket's last request) be read and discarded (Node discards a body nobody reads), for at
 * most `lingerMs` and `lingerBytes`.
 */
export function lingeringDestroySoon(limits: LingerLimits, requestOf: (socket: Socket) => IncomingMessage | undefined): (this: Socket) => void {
  return function destroySoon(this: Socket): void {
    const socket = this;
    const request = requestOf(socket);
    if (request === undefined || request.complete || socket.destroyed || limits.lingerMs === 0) return closeAtOnce.call(socket);
    const startBytes = socket.bytesRead;
    const deadline = Date.now() + limits.lingerMs;
    const finish = (): void => {
      clearInterval(check);
      request.off('end', finish);
      socket.off('close', finish);
      if (!socket.destroyed) closeAtOnce.call(socket);
    };
    const check = setInterval(() => {
      if (Date.now() >= deadline || socket.bytesRead - startBytes > limits.lingerBytes) finish();
    }, CHECK_INTERVAL_MS);
    request.once('end', finish);
    socket.once('close', finish);
    // Node stops reading a request nobody consumes once its answer is done: keep it flowing.
    request.resume();
  };
}
