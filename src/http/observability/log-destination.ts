import pino from 'pino';

/**
 * Log lines are gathered up to this size before they are written: one write(2) per line would
 * cost a system call per request, and each write is a hand-off to libuv's thread pool, which
 * shares the service's CPU.
 */
export const LOG_BUFFER_BYTES = 65_536;

// sonic-boom waits 100 ms before each retry of a write to a full pipe: at exit, a second in all.
const EXIT_WRITE_RETRIES = 10;

// sonic-boom's own field, missing from its type declarations.
type Destination = ReturnType<typeof pino.destination> & { readonly destroyed: boolean };

const destinations = new Map<string, Destination>();
let dropped = 0;

/**
 * Standard output as pino's asynchronous destination (sonic-boom, https://github.com/pinojs/sonic-boom),
 * one per process and setting however many apps are built: lines gather up to `LOG_BUFFER_BYTES`,
 * wait at most `flushMs`, and are written synchronously when the process exits, crash or not
 * (SIGKILL excepted). When standard output takes them more slowly than they come (a stalled log
 * pipeline), at most `backlogBytes` waits (sonic-boom's `maxLength`); lines beyond it are dropped
 * and counted (`droppedLogLines`), as are lines written after standard output was closed. An exit
 * gives a standard output that takes nothing a second, then goes on without it.
 *
 * @example
 * const logger = pino({ level: 'info' }, logDestination(250, 8 * 1024 * 1024));
 */
export function logDestination(flushMs: number, backlogBytes: number): pino.DestinationStream {
  const key = `${flushMs}/${backlogBytes}`;
  const made = destinations.get(key);
  if (made !== undefined) return made;
  // Node makes a pipe on fd 1 non-blocking once process.stdout exists: a full pipe then answers
  // EAGAIN, which can be given up at exit, instead of blocking the exit for as long as nobody reads.
  void process.stdout;
  let exiting = false;
  let exitRetries = 0;
  // Registered before pino.destination's own exit hook, so it runs first: a write given up after
  // the retries destroys the destination, which pino's hook then leaves alone instead of retrying forever.
  process.on('exit', () => {
    exiting = true;
    if (destination.destroyed) return;
    try {
      destination.flushSync();
    } catch {
      destination.destroy();
    }
  });
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_BUFFER_BYTES,
    // Each write takes at most this much, in whole lines; it must be above minLength.
    maxWrite: 4 * LOG_BUFFER_BYTES,
    maxLength: backlogBytes,
    retryEAGAIN: () => !exiting || ++exitRetries <= EXIT_WRITE_RETRIES,
  }) as Destination;
  destination.on('drop', () => dropped++);
  // pino's destination stops writing once standard output is closed (EPIPE); its lines are counted from then on.
  destination.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') destination.write = () => (dropped++, true);
  });
  setInterval(() => destination.flush(), flushMs).unref();
  destinations.set(key, destination);
  return destination;
}

/**
 * Log lines this process has dropped because standard output did not take them in time.
 *
 * @example
 * droppedLogLines() //=> 0 while whatever reads standard output keeps up
 */
export function droppedLogLines(): number {
  return dropped;
}
