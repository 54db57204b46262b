/**
 * A count of reserved bytes against a capacity, with a queue of requests waiting for room. Large
 * reservations may use all but `smallReserve` of the capacity, so that small requests always
 * find room while large ones run; small ones may use all of it.
 */

export interface Reservation {
  readonly bytes: number;
  /** Lowers the reservation to `bytes` (never raises it). */
  shrink(bytes: number): void;
  /** Gives the bytes back; a second call does nothing. */
  release(): void;
}

interface Waiter {
  readonly bytes: number;
  readonly large: boolean;
  readonly admit: (reservation: Reservation) => void;
  readonly timer: NodeJS.Timeout;
}

export class BudgetTimeout extends Error {
  constructor(waitedMs: number) {
    super(`no room in the memory budget after ${waitedMs} ms`);
  }
}

export class MemoryBudget {
  private reservedBytes = 0;
  private readonly queue: Waiter[] = [];
  /** Requests that had to wait, those refused after waiting, and those that could never fit (counted by the caller). */
  waits = 0;
  timeouts = 0;
  tooLarge = 0;

  constructor(
    /** Bytes requests may reserve in all. */
    readonly capacity: number,
    /** Part of the capacity large reservations leave to small ones. */
    readonly smallReserve: number,
  ) {}

  get reserved(): number {
    return this.reservedBytes;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** The most one reservation of this kind can ever get: more can never fit. */
  ceiling(large: boolean): number {
    return large ? this.capacity - this.smallReserve : this.capacity;
  }

  /**
   * Reserves `bytes` now if they fit, else waits up to `waitMs` for room (first come, first
   * served), else rejects with `BudgetTimeout`. The caller checks `ceiling` first.
   */
  reserve(bytes: number, large: boolean, waitMs: number): Promise<Reservation> | Reservation {
    // The order admitWaiting keeps: a small request passes waiting large ones, a large one does not.
    if (this.fits(bytes, large) && !(large && this.queue.some((waiter) => waiter.large))) return this.take(bytes);
    this.waits++;
    return new Promise<Reservation>((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        large,
        admit: resolve,
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(waiter), 1);
          this.timeouts++;
          reject(new BudgetTimeout(waitMs));
          this.admitWaiting(); // a large waiter that timed out may have been holding back others
        }, waitMs),
      };
      this.queue.push(waiter);
    });
  }

  private fits(bytes: number, large: boolean): boolean {
    return this.reservedBytes + bytes <= this.ceiling(large);
  }

  private take(bytes: number): Reservation {
    this.reservedBytes += bytes;
    return new HeldBytes(this, bytes);
  }

  /** Called by a reservation that gives back `bytes` of what it held. */
  giveBack(bytes: number): void {
    this.reservedBytes -= bytes;
    this.admitWaiting();
  }

  /**
   * Admits waiters in arrival order while they fit. Small waiters may pass a large one that does
   * not fit yet; large ones may not, so a large request is never starved by later large ones.
   */
  private admitWaiting(): void {
    let largeBlocked = false;
    for (let i = 0; i < this.queue.length;) {
      const waiter = this.queue[i] as Waiter;
      if ((waiter.large && largeBlocked) || !this.fits(waiter.bytes, waiter.large)) {
        if (waiter.large) largeBlocked = true;
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      clearTimeout(waiter.timer);
      waiter.admit(this.take(waiter.bytes));
    }
  }
}

// A class, not an object literal with a getter and two closures: one is made for every request to a body operation.
class HeldBytes implements Reservation {
  constructor(
    private readonly budget: MemoryBudget,
    private held: number,
  ) {}

  get bytes(): number {
    return this.held;
  }

  shrink(lower: number): void {
    if (lower >= this.held) return;
    const freed = this.held - lower;
    this.held = lower;
    this.budget.giveBack(freed);
  }

  release(): void {
    const freed = this.held;
    this.held = 0;
    this.budget.giveBack(freed);
  }
}
