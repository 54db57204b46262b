import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

export interface LingerLimits {
  /** Longest the rest of the body is read after the answer. */
  readonly lingerMs: number;
  /** Most bytes read after the answer. */
  readonly lingerBytes: number;
}

const CHECK_INTERVAL_MS = 100;
// Node's own, always called with .call(socket).
// eslint-disable-next-line @typescript-eslint/unbound-method
const closeAtOnce = Socket.prototype.destroySoon;

/** True while part of the request's body has not arrived yet. */
function hasUnreadBody(request: IncomingMessage): boolean {
  if (request.complete) return false;
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
}

/**
 * For an answer sent before the request's body has all arrived (405, 404, 413, 429, 503, any
 * early error): the answer says `Connection: close`, so that no client sends another request on
 * a connection whose rest of a body is still coming, and the connection closes once that rest
 * has been read (`lingeringDestroySoon`).
 *
 * @example
 * return sendProblem(announceCloseIfBodyUnread(request.raw, reply), problemOf(405, detail));
 */
export function announceCloseIfBodyUnread<Reply extends { header(name: string, value: string): unknown }>(request: IncomingMessage, reply: Reply): Reply {
  if (hasUnreadBody(request)) reply.header('connection', 'close');
  return reply;
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
    const request = requestOf(this);
    if (request === undefined || request.complete || this.destroyed || limits.lingerMs === 0) return closeAtOnce.call(this);
    const startBytes = this.bytesRead;
    const deadline = Date.now() + limits.lingerMs;
    const finish = (): void => {
      clearInterval(check);
      request.off('end', finish);
      this.off('close', finish);
      if (!this.destroyed) closeAtOnce.call(this);
    };
    const check = setInterval(() => {
      if (Date.now() >= deadline || this.bytesRead - startBytes > limits.lingerBytes) finish();
    }, CHECK_INTERVAL_MS);
    request.once('end', finish);
    this.once('close', finish);
    // Node stops reading a request nobody consumes once its answer is done: keep it flowing.
    request.resume();
  };
}
