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

/** What pino writes to: sonic-boom behind a count of the lines it holds. */
export interface LogDestination {
  write(line: string): boolean;
  flush(): void;
  flushSync(): void;
}

const destinations = new Map<string, LogDestination>();
let dropped = 0;

/**
 * The byte lengths of the lines handed to sonic-boom and not yet written, oldest first, kept
 * from its public events ('write' gives the bytes written, 'drop' a line it refused): what a
 * standard output that fails for good leaves unwritten.
 */
class HeldLines {
  private readonly lengths: number[] = [];
  private first = 0;
  // Bytes of the oldest held line already written (sonic-boom writes whole lines, but a pipe may take part of one).
  private partial = 0;
  /** Bytes held, less the part of the oldest line already written. */
  bytes = 0;

  add(bytes: number): void {
    this.lengths.push(bytes);
    this.bytes += bytes;
  }

  written(bytes: number): void {
    this.bytes -= bytes;
    let left = this.partial + bytes;
    while (this.first < this.lengths.length && left >= (this.lengths[this.first] as number)) left -= this.lengths[this.first++] as number;
    this.partial = left;
    if (this.first > 1024 && this.first * 2 > this.lengths.length) {
      this.lengths.splice(0, this.first);
      this.first = 0;
    }
  }

  /** Lines not written whole: counted once, then forgotten. */
  takeCount(): number {
    const count = this.lengths.length - this.first;
    this.lengths.length = 0;
    this.first = 0;
    this.partial = 0;
    this.bytes = 0;
    return count;
  }
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
export function logDestination(flushMs: number, backlogBytes: number): LogDestination {
  const key = `${flushMs}/${backlogBytes}`;
  const made = destinations.get(key);
  if (made !== undefined) return made;
  let exiting = false;
  let exitRetries = 0;
  const boom = new SonicBoom({
    fd: nonBlockingStdout(),
    sync: false,
    minLength: flushMs > 0 ? LOG_BUFFER_BYTES : 0,
    // Each write takes at most this much, in whole lines; it must be above minLength.
    maxWrite: 4 * LOG_BUFFER_BYTES,
    maxLength: backlogBytes,
    retryEAGAIN: (_error: Error, writing: number, remaining: number) => {
      if (!exiting || ++exitRetries <= EXIT_WRITE_RETRIES) return true;
      // Given up: flushSync may have written part of what it held, which no 'write' event reports.
      held.written(held.bytes - (writing + remaining));
      return false;
    },
  });
  const held = new HeldLines();
  let refused = false;
  let gone = false;
  let closed = false;
  const giveUp = () => {
    if (gone) return;
    gone = true;
    dropped += held.takeCount();
  };
  boom.on('write', (bytes: number) => held.written(bytes));
  boom.on('drop', () => {
    dropped++;
    refused = true;
  });
  // EPIPE above all; any other error of standard output leaves sonic-boom as unable to write.
  boom.on('error', giveUp);
  boom.on('close', () => (closed = true));
  const destination: LogDestination = {
    write(line) {
      if (gone) return (dropped++, true);
      refused = false;
      const wantsMore = boom.write(line);
      // sonic-boom emits 'drop' from within write() for a line beyond maxLength, which it does not hold.
      if (!refused) held.add(Buffer.byteLength(line));
      return wantsMore;
    },
    flush: () => {
      if (!gone) boom.flush();
    },
    flushSync: () => {
      if (!gone) boom.flushSync();
    },
  };
  process.on('exit', () => {
    exiting = true;
    if (gone || closed) return;
    try {
      boom.flushSync();
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
