/** A worker tells the primary it listens: `{ type: LISTENING, address, memory }`. */
export const LISTENING = 'json-utility:listening';
/**
 * The primary tells a worker to stop, with the signal it got: `{ type: STOP, signal }`. A signal
 * from a terminal reaches every process of the group, so workers leave SIGINT to the primary and
 * stop when it says.
 */
export const STOP = 'json-utility:stop';
/** A worker that cannot listen exits with this, so that the primary stops instead of starting another. */
export const EXIT_CANNOT_LISTEN = 78;
/** The signals that stop the service. */
export const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
