import pino from 'pino';

// One write(2) per log line would cost a system call per request: lines are gathered up to this
// size instead, and written at least every LOG_FLUSH_MS. Each write is also a hand-off to libuv's
// thread pool, which shares the service's CPU: 64 KiB writes cost less per line than 4 KiB ones
// (bench/results/ab/log-buffer-*.md).
export const LOG_BUFFER_BYTES = 65_536;

// sonic-boom's own fields, missing from its type declarations.
type SonicBoom = ReturnType<typeof pino.destination> & { readonly destroyed: boolean; readonly fd: number };

/**
 * Lines gathered in an array and handed to `target` (pino's asynchronous destination, sonic-boom)
 * as one string once they reach `LOG_BUFFER_BYTES`, every `flushMs`, and on exit. sonic-boom can
 * buffer by itself (`minLength`), but it appends each line to one string and measures that
 * string's UTF-8 length on every write, which copies the whole buffer per line
 * (bench/micro/log-destination.ts, bench/results/ab/log-destination.md).
 */
class LineBatch implements pino.DestinationStream {
  #lines: string[] = [];
  #length = 0;
  /** Lines of the hand-over being given to the destination, which it may drop whole. */
  #handing = 0;
  dropped = 0;

  constructor(private readonly target: SonicBoom) {
    // sonic-boom drops a write that would take what it holds past its maxLength, synchronously.
    target.on('drop', () => (this.dropped += this.#handing));
  }

  write(line: string): void {
    this.#lines.push(line);
    // Characters, not bytes: a threshold, not a limit.
    this.#length += line.length;
    if (this.#length >= LOG_BUFFER_BYTES) this.handOver();
  }

  /** Gives what is gathered to the destination, which starts writing it at once; a destroyed one gets nothing, and nothing piles up for it. */
  handOver(): void {
    if (this.#length === 0) return;
    const text = this.#lines.join('');
    this.#handing = this.#lines.length;
    this.#lines = [];
    this.#length = 0;
    if (!this.target.destroyed) this.target.write(text);
  }

  flushSync(): void {
    this.handOver();
    if (!this.target.destroyed && this.target.fd >= 0) this.target.flushSync();
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
    // minLength 0: each hand-over is written at once; the batching is LineBatch's.
    const batch = new LineBatch(pino.destination({ dest: 1, sync: false, minLength: 0, maxLength: backlogBytes }) as SonicBoom);
    setInterval(() => batch.handOver(), flushMs).unref();
    // 'exit' comes whenever Node ends the process itself: the event loop ran out, process.exit(),
    // an uncaught exception (not SIGKILL or another unhandled signal); only synchronous writes happen then.
    process.on('exit', () => batch.flushSync());
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
