/**
 * How long work admitted now would wait before it starts, measured in the two places where a
 * Node.js process's requests queue (protection.ts reads both):
 *
 * - `LoopDelay`, the event loop: a request's body is read and its answer computed in a later turn,
 *   after everything ready before it. A timer due every `TICK_MS` records how late it ran.
 * - `LoopShare`, the event loop's busy share: Node accepts one connection a turn, so when arrivals
 *   outpace the loop the queue grows in the kernel's accept queue, where no delay of the loop's
 *   shows it (its turns stay short). A loop busy all the time is that queue's only sign.
 * - `CompletionInterval`, a task queue's rate (the offload pool's: bodies over OFFLOAD_BODY_BYTES
 *   wait there for a thread): the interval between completions while tasks waited. The requests
 *   admitted to it and not yet answered, times that interval, is how long a newcomer would wait:
 *   the queue's length over its rate (Little's law).
 */

const TICK_MS = 10;
// The weight of the newest interval in CompletionInterval's average: about the last ten tasks count.
const NEWEST_WEIGHT = 0.1;

export class LoopDelay {
  private lastTick = performance.now();
  // How late the last ticks ran: the delay is their least, so that one long turn (a start-up's
  // compilation, a collection) is no queue, while a loop that is late at every turn is.
  private readonly late = [0, 0, 0];
  private next = 0;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => {
      const now = performance.now();
      this.late[this.next] = Math.max(0, now - this.lastTick - TICK_MS);
      this.next = (this.next + 1) % this.late.length;
      this.lastTick = now;
    }, TICK_MS).unref();
  }

  /**
   * How late the event loop runs what is ready, in milliseconds: the least of its last three turns.
   *
   * @example
   * new LoopDelay().ms() //=> 0.4 on an idle loop
   */
  ms(): number {
    return Math.min(...this.late);
  }

  close(): void {
    clearInterval(this.timer);
  }
}

// LoopShare: how often it measures, the busy share it keeps the loop under, and how fast it moves.
const SHARE_WINDOW_MS = 100;
const BUSY_SETPOINT = 0.95;
const SHARE_GAIN = 0.5;

export class LoopShare {
  private last = performance.eventLoopUtilization();
  private share = 0;
  private connections = 0;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    // Each window moves the share refused by how far the loop was over (or under) its setpoint:
    // proportional, so that an overload of twice or five times the loop's capacity settles where
    // the loop just keeps up, and a busy burst moves it little.
    this.timer = setInterval(() => {
      // A window with no new connection had no accept queue to drain, however busy the loop was.
      const busy = this.connections > 0 ? performance.eventLoopUtilization(this.last).utilization : 0;
      this.last = performance.eventLoopUtilization();
      this.connections = 0;
      this.share = Math.min(1, Math.max(0, this.share + SHARE_GAIN * (busy - BUSY_SETPOINT)));
    }, SHARE_WINDOW_MS).unref();
  }

  /** Counts a connection accepted (the server's `connection` event). */
  connected(): void {
    this.connections++;
  }

  /**
   * The share of requests refused now, from 0 to 1.
   *
   * @example
   * new LoopShare().refused() //=> 0 on a loop with time to spare
   */
  refused(): number {
    return this.share;
  }

  close(): void {
    clearInterval(this.timer);
  }
}

export class CompletionInterval {
  private lastCompletion = 0;
  private intervalMs = 0;

  /**
   * The time between two completions while tasks waited, in milliseconds, averaged over recent
   * tasks: how long each task ahead holds a newcomer back. 0 until tasks have queued.
   *
   * @example
   * interval.ms() //=> 2.6 for a pool that answers one sort of 10,000 numbers every 2.6 ms
   */
  ms(): number {
    return this.intervalMs;
  }

  /**
   * Counts a task from its submission; call the function it returns once the task settles.
   *
   * @example
   * const settled = interval.started(); try { await pool.run(task) } finally { settled() }
   */
  started(): () => void {
    const submitted = performance.now();
    return () => {
      const now = performance.now();
      // A task that found the pool idle says nothing of the pool's rate (and the first one
      // includes the thread's start): only one submitted before the last completion does.
      if (submitted < this.lastCompletion) {
        // One outlier (a collection, a thread restarted) moves the average by a bounded step.
        const interval = this.intervalMs === 0 ? now - this.lastCompletion : Math.min(now - this.lastCompletion, 4 * this.intervalMs);
        this.intervalMs = this.intervalMs === 0 ? interval : this.intervalMs + NEWEST_WEIGHT * (interval - this.intervalMs);
      }
      this.lastCompletion = now;
    };
  }
}
