/**
 * How long work admitted now would wait before it starts, measured in the two places where a
 * Node.js process's requests queue (protection.ts reads both):
 *
 * - `LoopDelay`, the event loop: a request's body is read and its answer computed in a later turn,
 *   after everything ready before it. A timer due every `TICK_MS` records how late it ran.
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
