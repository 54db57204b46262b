import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerLimits {
  /** Longest the rest of the body is read after the answer. */
  readonly lingerMs: number;
  /** Most bytes read after the answer. */
  readonly lingerBytes: number;
}

const CHECK_INTERVAL_MS = 100;
const lingering = Symbol('lingering');
type LingeringSocket = Socket & { [lingering]?: true };

/** True while part of the request's body has not arrived yet. */
export function hasUnreadBody(request: IncomingMessage): boolean {
  if (request.complete) return false;
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
}

/**
 * Lingering close (RFC 9112 §9.6): when the service answers before it has read the whole body
 * (413, 503, any early error), closing the connection at once would make the client's kernel
 * reset it while the client is still uploading, and the answer would be lost with it. Node
 * closes the socket with `destroySoon()` once the answer is written; for this socket that now
 * waits until the rest of the body has been read and discarded (Node discards a request body
 * nobody reads), at most `lingerMs` and `lingerBytes`. Call while the answer is being sent.
 */
export function lingerBeforeClosing(request: IncomingMessage, limits: LingerLimits): void {
  const socket = request.socket as LingeringSocket;
  // A socket Node does not close with destroySoon (light-my-request's stand-in) has nothing to wait for.
  if (socket[lingering] === true || typeof socket.destroySoon !== 'function') return;
  socket[lingering] = true;
  const closeNow = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    if (request.complete || socket.destroyed || limits.lingerMs === 0) return closeNow();
    const startBytes = socket.bytesRead;
    const deadline = Date.now() + limits.lingerMs;
    const finish = (): void => {
      clearInterval(check);
      request.off('end', finish);
      socket.off('close', finish);
      if (!socket.destroyed) closeNow();
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
