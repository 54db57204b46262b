import type { Socket } from 'node:net';

/**
 * Node checks REQUEST_TIMEOUT_MS (the time to receive a whole request) for the whole server, and
 * a stream's body may rightly take hours: it has timeouts of its own (operations/stream-route.ts).
 * While such a request runs, its socket is here, and the client-error handler (problem.ts)
 * ignores Node's request timeout for it.
 */
const exempt = new WeakSet<Socket>();

/** Exempts the socket's current request from REQUEST_TIMEOUT_MS (`on`), or ends the exemption. */
export function exemptFromRequestTimeout(socket: Socket, on: boolean): void {
  if (on) exempt.add(socket);
  else exempt.delete(socket);
}

/** Whether the socket's current request is exempt from REQUEST_TIMEOUT_MS. */
export function isExemptFromRequestTimeout(socket: Socket): boolean {
  return exempt.has(socket);
}
