import type pino from 'pino';
import sonicBoom, { type SonicBoom, type SonicBoomOpts } from 'sonic-boom';

// One write(2) per log line would cost a system call per request: lines are gathered up to this
// size instead, and written at least every LOG_FLUSH_MS. Each write is also a hand-off to libuv's
// thread pool, which shares the service's CPU: 64 KiB writes cost less per line than 4 KiB ones
// (bench/results/ab/log-buffer-*.md).
export const LOG_BUFFER_BYTES = 65_536;

// sonic-boom waits 100 ms before each retry of a write to a full pipe: at exit, a second in all.
const EXIT_WRITE_RETRIES = 10;

// sonic-boom's own fields, missing from its type declarations; `sync` is read at each write.
type Destination = SonicBoom & { readonly destroyed: boolean; readonly fd: number; sync: boolean };
// sonic-boom is CommonJS (`module.exports = SonicBoom`); its declarations describe an ES default export.
const SonicBoomClass = sonicBoom as unknown as new (options: SonicBoomOpts) => Destination;

/**
 * Lines gathered in an array and handed to `target` (sonic-boom, the asynchronous destination
 * pino makes) as one string once they reach `LOG_BUFFER_BYTES`, every `flushMs`, and on exit.
 * sonic-boom can buffer by itself (`minLength`), but it appends each line to one string and
 * measures that string's UTF-8 length on every write, which copies the whole buffer per line
 * (bench/micro/log-destination.ts, bench/results/ab/log-destination.md).
 */
class LineBatch implements pino.DestinationStream {
  #lines: string[] = [];
  #length = 0;
  /** Lines of the hand-over being given to the destination, which it may drop whole. */
  #handing = 0;
  /** Set once standard output is closed (EPIPE); lines are then dropped and counted. */
  #failed = false;
  dropped = 0;

  constructor(private readonly target: Destination) {
    // sonic-boom drops a write that would take what it holds past its maxLength, synchronously.
    target.on('drop', () => (this.dropped += this.#handing));
    // Unheard, an 'error' would be an uncaught exception: a failed write must not end the service.
    // A closed standard output (EPIPE) takes nothing more, as pino's own destination assumes; after
    // another error (a full disk) the lines of that write are lost and writing goes on.
    target.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') this.#failed = true;
    });
  }

  write(line: string): void {
    this.#lines.push(line);
    // Characters, not bytes: a threshold, not a limit.
    this.#length += line.length;
    if (this.#length >= LOG_BUFFER_BYTES) this.handOver();
  }

  /** Gives what is gathered to the destination, which starts writing it at once; nothing piles up for a failed or destroyed one. */
  handOver(): void {
    if (this.#length === 0) return;
    const text = this.#lines.join('');
    this.#handing = this.#lines.length;
    this.#lines = [];
    this.#length = 0;
    if (this.#failed || this.target.destroyed) this.dropped += this.#handing;
    else this.target.write(text);
  }

  flushSync(): void {
    this.handOver();
    if (!this.#failed && !this.target.destroyed && this.target.fd >= 0) this.target.flushSync();
  }
}

const streams = new Map<string, LineBatch>();

/**
 * Standard output through a buffer, one per process, interval and backlog however many apps are
 * built: lines wait at most `flushMs` and are written synchronously when the process exits, crash
 * or not (SIGKILL excepted). When standard output takes them more slowly than they come (a stalled
 * log pipeline), at most `backlogBytes` of text waits; what comes beyond it is dropped, whole
 * hand-overs at a time, and counted (`droppedLogLines`).
 *
 * @example
 * const logger = pino({ level: 'info' }, bufferedStdout(250, 8 * 1024 * 1024));
 */
export function bufferedStdout(flushMs: number, backlogBytes: number): pino.DestinationStream {
  const key = `${flushMs}/${backlogBytes}`;
  let stream = streams.get(key);
  if (stream === undefined) {
    // Node makes a pipe on fd 1 non-blocking once process.stdout exists (the service's banner
    // makes it anyway): a full pipe then answers EAGAIN, which can be given up at exit, instead
    // of blocking a write, and with it the exit, for as long as nothing reads the pipe.
    void process.stdout;
    let exiting = false;
    let exitRetries = 0;
    // Made here rather than by pino.destination(), whose own exit hook would retry a full pipe forever.
    const destination = new SonicBoomClass({
      fd: 1,
      sync: false,
      // 0: each hand-over is written at once; the batching is LineBatch's.
      minLength: 0,
      maxLength: backlogBytes,
      // A full pipe is retried every 100 ms while the process runs; at exit EXIT_WRITE_RETRIES times.
      retryEAGAIN: () => !exiting || ++exitRetries <= EXIT_WRITE_RETRIES,
    });
    const batch = new LineBatch(destination);
    setInterval(() => batch.handOver(), flushMs).unref();
    // 'exit' comes whenever Node ends the process itself: the event loop ran out, process.exit(),
    // an uncaught exception (not SIGKILL or another unhandled signal); only synchronous writes happen then.
    process.on('exit', () => {
      exiting = true;
      // The last hand-over would otherwise start an asynchronous write that the exit cuts off.
      destination.sync = true;
      try {
        batch.flushSync();
      } catch {
        // Standard output still takes nothing after a second: what is left is lost, the exit goes on.
      }
    });
    streams.set(key, (stream = batch));
  }
  return stream;
}

/**
 * Log lines this process has dropped because standard output did not take them in time.
 *
 * @example
 * droppedLogLines() //=> 0 while whatever reads standard output keeps up
 */
export function droppedLogLines(): number {
  let dropped = 0;
  for (const stream of streams.values()) dropped += stream.dropped;
  return dropped;
}
