import { closeSync, openSync, readSync } from 'node:fs';
import type { Server } from 'node:net';

/**
 * How long work admitted now would wait before it starts, measured in the three places where a
 * Node.js process's requests queue (protection.ts reads them all):
 *
 * - `LoopDelay`, the event loop: a request's body is read and its answer computed in a later turn,
 *   after everything ready before it. A timer due every `TICK_MS` records how late it ran, and
 *   how late it is while a turn still runs.
 * - `CompletionInterval`, a task queue's rate (the offload pool's: bodies over OFFLOAD_BODY_BYTES
 *   wait there for a thread): the interval between completions while tasks waited. The requests
 *   admitted to it and not yet answered, times that interval, is how long a newcomer would wait:
 *   the queue's length over its rate (Little's law).
 * - `AcceptQueue`, the listening socket's queue in the kernel, where new connections wait for the
 *   loop to accept them, one a turn: its length times the time between two accepts. Whether it
 *   grows: connections' arrivals against the rate of accepts, or, while the loop has had time to
 *   spare, against `RequestTime`, the rate it answers requests at.
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

  /**
   * How long the tick now due has been overdue, in milliseconds: how long the turn running now has
   * kept the loop from its timers. The least of the last turns cannot see this one until it ends,
   * and a turn that reads hundreds of requests runs long before it does.
   *
   * @example
   * loop.overdueMs() //=> 0 between turns; 30 while a turn that began 40 ms after the last tick goes on
   */
  overdueMs(): number {
    return Math.max(0, performance.now() - this.lastTick - TICK_MS);
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

// The loop's time a request is measured over windows this long, each with at least this many requests:
// long enough that a stall of a few hundred milliseconds (a collection's helper threads on the same
// CPU, the machine's) is a part of one, not the whole.
const REQUEST_WINDOW_MS = 1_000;
const FEWEST_REQUESTS = 50;
// A loop busy under this share of a window had time to spare: it was below its capacity.
const SPARE_UTILISATION = 0.95;

/**
 * The event loop's busy time a request, in milliseconds, over the last window of
 * `REQUEST_WINDOW_MS` that refused none and admitted at least `FEWEST_REQUESTS` (0 until one has),
 * and whether the last window left the loop time to spare. Past capacity every window refuses, and
 * refusals are cheap (they would make requests look cheap), so the figure from before is kept.
 *
 * @example
 * const time = new RequestTime(); time.admitted(); // for each request admitted
 * time.ms() //=> 0.9 once a second of batches of 1,000 operations has been admitted whole
 */
export class RequestTime {
  private requestMs = 0;
  private spare = false;
  private admittedCount = 0;
  private refusedAny = false;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    let busy = performance.eventLoopUtilization();
    let admittedThen = 0;
    this.timer = setInterval(() => {
      const window = performance.eventLoopUtilization(busy);
      busy = performance.eventLoopUtilization();
      const admitted = this.admittedCount - admittedThen;
      if (!this.refusedAny && admitted >= FEWEST_REQUESTS) this.requestMs = window.active / admitted;
      this.spare = window.utilization < SPARE_UTILISATION;
      admittedThen = this.admittedCount;
      this.refusedAny = false;
    }, REQUEST_WINDOW_MS).unref();
  }

  /** The loop's time a request, in milliseconds; 0 while unknown. */
  ms(): number {
    return this.requestMs;
  }

  /** Whether the loop was busy under `SPARE_UTILISATION` of the last window: below its capacity. */
  hadTimeToSpare(): boolean {
    return this.spare;
  }

  /** Counts a request admitted. */
  admitted(): void {
    this.admittedCount++;
  }

  /** Tells that a request was refused: this window's time is no request's. */
  refused(): void {
    this.refusedAny = true;
  }

  close(): void {
    clearInterval(this.timer);
  }
}

// Read this often while the loop is busy and connections wait to be accepted, and this seldom
// while none did: a read that finds few sockets walks the kernel's whole table of them, one among
// many stops early (what each costs: docs/performance.md, "Past capacity").
const ACCEPT_SAMPLE_MS = 10;
const ACCEPT_QUIET_MS = 200;
// Below this share of the loop busy, it returns to the kernel often enough that no connection waits long.
const BUSY_UTILISATION = 0.9;
const PROC_READ_BYTES = 16 * 1024;
// The accept rate is averaged over this many ticks that found connections queued.
const ACCEPT_TICKS = 10;
const BURST_SHARE = 0.5;

/**
 * How long a connection waits in the listening socket's accept queue, on Linux: libuv accepts one
 * connection per turn of the event loop (libuv/libuv#3696), so past capacity new connections
 * queue in the kernel, where no delay the process measures shows them. The queue's length is the
 * listening socket's `rx_queue` in /proc/net/tcp or tcp6 (proc(5)), read while the loop is busy
 * and followed between reads (what arrived at the last rate, less what the process accepted); its
 * wait, that length times the time between two accepts (Little's law). 0 while connections arrive
 * at under half the rate answers are made (a burst that drains), and where there is no /proc.
 */
export class AcceptQueue {
  private queued = 0;
  private sampledAt = 0;
  private arrivalsPerMs = 0;
  private acceptedSince = 0;
  // The last ticks that began with connections queued: how long each lasted and how many
  // connections were accepted in it.
  private readonly tickMs = Array<number>(ACCEPT_TICKS).fill(0);
  private readonly acceptedIn = Array<number>(ACCEPT_TICKS).fill(0);
  private next = 0;
  // The time between two accepts in the last tick with a queue that refused nothing: one answer's.
  private answerIntervalMs = 0;
  private refusing = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly buffer = Buffer.alloc(PROC_READ_BYTES);
  private fd = -1;

  /**
   * @example
   * const queue = new AcceptQueue(server, 1, new RequestTime()); queue.ms() //=> 0 while connections are accepted at once
   */
  constructor(
    server: Server,
    private readonly workers: number,
    private readonly requestTime: RequestTime,
  ) {
    const address = server.address();
    if (address === null || typeof address === 'string') return;
    try {
      this.fd = openSync(address.family === 'IPv6' ? '/proc/net/tcp6' : '/proc/net/tcp', 'r');
    } catch {
      return;
    }
    const port = `:${address.port.toString(16).toUpperCase().padStart(4, '0')}`;
    // With WORKERS > 1 every worker accepts from the one socket, each at about this one's rate.
    server.on('connection', () => void (this.acceptedSince += workers));
    let lastTick = performance.now();
    let acceptedAtTick = 0;
    let lastUtilisation = performance.eventLoopUtilization();
    let nextSample = 0;
    this.timer = setInterval(() => {
      const now = performance.now();
      const utilisation = performance.eventLoopUtilization(lastUtilisation).utilization;
      lastUtilisation = performance.eventLoopUtilization();
      if (this.queued > 0) {
        const accepted = this.acceptedSince - acceptedAtTick;
        this.tickMs[this.next] = now - lastTick;
        this.acceptedIn[this.next] = accepted;
        this.next = (this.next + 1) % ACCEPT_TICKS;
        // A tick that refused nothing accepted at the rate of answers.
        if (!this.refusing && accepted > 0) this.answerIntervalMs = (now - lastTick) / accepted;
      }
      this.refusing = false;
      lastTick = now;
      acceptedAtTick = this.acceptedSince;
      if (utilisation < BUSY_UTILISATION) {
        this.queued = 0;
        this.forgetRate();
      } else if (now >= nextSample) {
        const queued = this.read(port);
        // What arrived since the last read: what is queued now, less what was then, plus what was accepted.
        if (this.queued > 0 || queued > 0) this.arrivalsPerMs = Math.max(0, queued - this.queued + this.acceptedSince) / (now - this.sampledAt);
        // Each queue is timed afresh: the last one's rate was another load's.
        if (queued === 0) this.forgetRate();
        this.queued = queued;
        this.sampledAt = now;
        this.acceptedSince = 0;
        acceptedAtTick = 0;
        nextSample = now + (queued > 0 ? ACCEPT_SAMPLE_MS : ACCEPT_QUIET_MS);
      }
    }, ACCEPT_SAMPLE_MS).unref();
  }

  /**
   * How long a connection queued now would wait to be accepted, in milliseconds.
   *
   * @example
   * queue.ms() //=> 120 with 100 connections queued and one accepted every 1.2 ms
   */
  ms(): number {
    if (this.queued === 0) return 0;
    // Connections that arrive at under half the rate the process answers them are a burst (many
    // opened at once) that the queue drains even if every one is admitted: like CoDel, only a
    // queue that does not drain is overload.
    if (this.arrivalShare() < BURST_SHARE) return 0;
    const intervalMs = this.acceptIntervalMs();
    const queued = this.queued + this.arrivalsPerMs * (performance.now() - this.sampledAt) - this.acceptedSince;
    return Math.max(0, queued) * intervalMs;
  }

  /**
   * Whether connections arrive faster than the process answers them, so that the queue grows
   * whatever it admits; one that arrives slower drains by itself (a pause, then load below capacity).
   *
   * @example
   * queue.grows() //=> true with 2,000 connections arriving a second and one answered every 1.2 ms
   */
  grows(): boolean {
    return this.queued > 0 && this.arrivalShare() >= 1;
  }

  /** Tells the queue that a request was refused: this tick's accepts are no answers' rate. */
  refused(): void {
    this.refusing = true;
  }

  close(): void {
    clearInterval(this.timer);
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  // Connections arriving per connection answered: under 1 the queue drains whatever is admitted.
  // While the loop had time to spare in the last second, answers come at the rate that second
  // showed (RequestTime), a connection a request: a stall (a collection's helper threads on the
  // service's CPU, the machine's other tenants) slows the accepts for a few hundred milliseconds,
  // and timed by them a queue that drains once it ends looked like overload, refused at 80% of
  // capacity. At capacity, at the rate of accepts in the last tick that refused nothing: traffic on
  // kept-alive connections lengthens the turns, and with them the time between two accepts. Unknown
  // while no tick since the queue formed has gone without a refusal (past capacity every one
  // refuses): 1, a queue that does not drain. Counted 0, once the queue had emptied the next
  // overload was admitted whole, and the listen backlog filled (docs/performance.md, "Past capacity").
  private arrivalShare(): number {
    const requestMs = this.requestTime.ms();
    if (requestMs > 0 && this.requestTime.hadTimeToSpare()) return (this.arrivalsPerMs * requestMs) / this.workers;
    return this.answerIntervalMs === 0 ? 1 : this.arrivalsPerMs * this.answerIntervalMs;
  }

  // The next queue's rates are its own: until its first tick, its wait counts 0.
  private forgetRate(): void {
    this.tickMs.fill(0);
    this.acceptedIn.fill(0);
    this.answerIntervalMs = 0;
  }

  // The time between two accepts over the last ticks with a queue: their time over their accepts.
  private acceptIntervalMs(): number {
    const accepted = this.acceptedIn.reduce((sum, count) => sum + count, 0);
    return accepted === 0 ? 0 : this.tickMs.reduce((sum, ms) => sum + ms, 0) / accepted;
  }

  // The listening socket's line comes first: the kernel lists listening sockets before the others.
  private read(port: string): number {
    const length = readSync(this.fd, this.buffer, 0, PROC_READ_BYTES, 0);
    for (const line of this.buffer.toString('latin1', 0, length).split('\n')) {
      const [, local, , state, queues] = line.trim().split(/\s+/);
      if (state === '0A' && local?.endsWith(port) === true) return Number.parseInt(queues?.split(':')[1] ?? '0', 16);
    }
    return 0;
  }
}
