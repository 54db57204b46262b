import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import { lingeringDestroySoon, type LingerLimits } from './lingering-close.js';

const inFlight = Symbol('requests in flight');
const lastRequest = Symbol('last request');
const finishers = Symbol('to run when the response closes');
type TrackedSocket = Socket & { [inFlight]?: number; [lastRequest]?: IncomingMessage };
/** What runs once a response has closed: flushed whole, or its client gone. */
export type Finisher = (response: ServerResponse) => void;

/** What the `connections` plugin offers the app. */
export interface Connections {
  /** True from the start of shutdown. */
  isClosing(): boolean;
  /** Sets the one function told of each response whose connection closed before it was flushed whole (its client went away). */
  whenClientGoes(told: Finisher): void;
}
// null: the connection manager listens for this response's close, with no finisher yet; undefined: it does not (an injected request).
type FinishingResponse = ServerResponse & { [finishers]?: Finisher[] | null };

function runFinishers(response: FinishingResponse): void {
  const list = response[finishers];
  if (list) for (const finish of list) finish(response);
}

function finishOnClose(this: FinishingResponse): void {
  runFinishers(this);
}

/**
 * Runs `finish` once `response` has closed, from the one `close` listener each response has
 * (the `connections` plugin's). `finish` should be a function made once, not per request.
 *
 * @example
 * whenResponseCloses(reply.raw, releaseReservation);
 */
export function whenResponseCloses(response: ServerResponse, finish: Finisher): void {
  const closing = response as FinishingResponse;
  const list = closing[finishers];
  if (list) return void list.push(finish);
  // A request that did not come through the server's socket (Fastify's inject) has no listener yet.
  if (list === undefined) response.on('close', finishOnClose);
  closing[finishers] = [finish];
}

/**
 * Whether a closed response reached its client whole: 'close' came after 'finish', on a socket
 * that did not fail. Node 22 emits 'finish' for an answer cut off by the client's reset as well
 * (its `writableFinished` is true then): there, the socket was destroyed with an error.
 *
 * @example
 * response.on('close', () => answeredWhole(response) || countGone());
 */
export function answeredWhole(response: ServerResponse): boolean {
  const socket = response.req.socket;
  return response.writableFinished && !(socket.destroyed && socket.errored !== null);
}

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
function manageConnections(server: Server, linger: LingerLimits): Connections {
  const sockets = new Set<TrackedSocket>();
  let closing = false;
  let clientGone: Finisher | undefined;
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
  // One listener for every response, no closure per request: the socket is found through the request.
  const responseClosed = function (this: FinishingResponse) {
    const socket = this.req.socket as TrackedSocket;
    socket[inFlight] = (socket[inFlight] ?? 1) - 1;
    if (closing && socket[inFlight] === 0) end(socket);
    if (!answeredWhole(this)) clientGone?.(this);
    runFinishers(this);
  };
  // Before Fastify's own listener, so that the response is watched before any hook asks to be told of its close.
  server.prependListener('request', (request: IncomingMessage, response: FinishingResponse) => {
    const socket = request.socket as TrackedSocket;
    socket[inFlight] = (socket[inFlight] ?? 0) + 1;
    socket[lastRequest] = request;
    response[finishers] = null;
    // 'close' comes once the response is flushed, or the client went away.
    response.on('close', responseClosed);
  });

  server.closeIdleConnections = () => {
    closing = true;
    for (const socket of sockets) if ((socket[inFlight] ?? 0) === 0) end(socket);
  };
  return {
    isClosing: () => closing,
    whenClientGoes: (told) => void (clientGone = told),
  };
}

/**
 * The `connections` plugin: `manageConnections` on the app's server, and `app.connections`.
 * Every response's one `close` listener is its; others join it with `whenResponseCloses`, and
 * one function (the access log's) hears of every response whose client went away, through
 * `app.connections.whenClientGoes`.
 *
 * @example
 * await app.register(connections, { lingerMs: 2000, lingerBytes: 1024 * 1024 }); // app.connections.isClosing()
 */
export const connections = fp<LingerLimits>(
  async (app, linger) => {
    app.decorate('connections', manageConnections(app.server, linger));
  },
  { name: 'connections', fastify: '5.x' },
);
