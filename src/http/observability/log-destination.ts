import { constants, fstatSync, openSync } from 'node:fs';
import sonicBoom from 'sonic-boom';

// A CommonJS module whose class Node's ES module loader finds only on its default export.
const { SonicBoom } = sonicBoom;

/**
 * Log lines are gathered up to this size before they are written: one write(2) per line would
 * cost a system call per request, and each write is a hand-off to libuv's thread pool, which
 * shares the service's CPU.
 */
export const LOG_BUFFER_BYTES = 65_536;

// sonic-boom waits 100 ms before each retry of a write to a full pipe: at exit, a second in all.
const EXIT_WRITE_RETRIES = 10;

// sonic-boom's own fields, missing from its type declarations: what it holds but has not written.
type Destination = InstanceType<typeof SonicBoom> & { readonly destroyed: boolean; readonly _bufs: string[]; readonly _writingBuf: string };

const destinations = new Map<string, Destination>();
let dropped = 0;

function linesIn(text: string): number {
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

/**
 * A descriptor of standard output on which a full pipe answers EAGAIN, which can be given up at
 * exit, instead of blocking the exit for as long as nobody reads. A pipe is opened again, as an
 * open file of this process's own: O_NONBLOCK belongs to an open file, which cluster workers
 * share with their primary, and Node resets it on fd 1 when a process exits, so the first worker
 * to exit would leave the others' exit writes blocking on a pipe nobody reads.
 */
function nonBlockingStdout(): number {
  try {
    if (fstatSync(1).isFIFO()) return openSync('/proc/self/fd/1', constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    // No /proc, or a pipe with no reader left (ENXIO): fd 1, whose writes then fail at once with EPIPE.
  }
  // Node makes a pipe on fd 1 non-blocking once process.stdout exists.
  void process.stdout;
  return 1;
}

/**
 * Standard output as an asynchronous destination for pino (sonic-boom, https://github.com/pinojs/sonic-boom),
 * one per process and setting however many apps are built. With `flushMs` above 0, lines gather up
 * to `LOG_BUFFER_BYTES` and wait at most `flushMs`; with 0 each is handed over at once. Lines
 * still held are written synchronously when the process exits, crash or not (SIGKILL excepted).
 *
 * Whatever standard output does, the process can still stop and logging never blocks it:
 * - read too slowly (a stalled log pipeline): at most `backlogBytes` waits (sonic-boom's
 *   `maxLength`); lines beyond it are dropped and counted;
 * - never read at exit: a second of retries, then the held lines are given up and counted;
 * - its reader gone (EPIPE: a pipe to `head`, a log shipper that died): the held lines and every
 *   line after them are dropped and counted. sonic-boom 4 retried an EPIPE in `flushSync` forever,
 *   in a synchronous sleep no signal could interrupt; 5.0 throws it, and this catches it.
 *
 * @example
 * const logger = pino({ level: 'info' }, logDestination(250, 8 * 1024 * 1024));
 */
export function logDestination(flushMs: number, backlogBytes: number): Destination {
  const key = `${flushMs}/${backlogBytes}`;
  const made = destinations.get(key);
  if (made !== undefined) return made;
  let exiting = false;
  let exitRetries = 0;
  const destination = new SonicBoom({
    fd: nonBlockingStdout(),
    sync: false,
    minLength: flushMs > 0 ? LOG_BUFFER_BYTES : 0,
    // Each write takes at most this much, in whole lines; it must be above minLength.
    maxWrite: 4 * LOG_BUFFER_BYTES,
    maxLength: backlogBytes,
    retryEAGAIN: () => !exiting || ++exitRetries <= EXIT_WRITE_RETRIES,
  }) as Destination;
  let gone = false;
  const giveUp = () => {
    if (gone) return;
    gone = true;
    dropped += linesIn(destination._writingBuf) + destination._bufs.reduce((sum, text) => sum + linesIn(text), 0);
    destination.write = () => (dropped++, true);
    destination.flush = () => undefined;
    destination.flushSync = () => undefined;
  };
  destination.on('drop', () => dropped++);
  // EPIPE above all; any other error of standard output leaves sonic-boom as unable to write.
  destination.on('error', giveUp);
  process.on('exit', () => {
    exiting = true;
    if (gone || destination.destroyed) return;
    try {
      destination.flushSync();
    } catch {
      giveUp();
    }
  });
  if (flushMs > 0) setInterval(() => destination.flush(), flushMs).unref();
  destinations.set(key, destination);
  return destination;
}

/**
 * Log lines this process has dropped because standard output did not take them in time, or was gone.
 *
 * @example
 * droppedLogLines() //=> 0 while whatever reads standard output keeps up
 */
export function droppedLogLines(): number {
  return dropped;
}
