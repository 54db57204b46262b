import type { FastifyBaseLogger } from 'fastify';

// While refusing, one log line this often at most: thousands of refusals a second past capacity
// are counted in /metrics, not logged each.
const REFUSING_LINE_MS = 10_000;

/**
 * Refusals on purpose (overload control's, @fastify/under-pressure's), counted, and told in one
 * warn line at most every `REFUSING_LINE_MS`.
 *
 * @example
 * const shed = new RefusalLog(app.serviceLog, 'shedding load'); shed.count(() => ({ delayMs: 80 }));
 */
export class RefusalLog {
  total = 0;
  private totalAtLine = 0;
  private lineAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly message: string,
  ) {}

  /** Counts one; `fields` are the line's own, read only when one is written. */
  count(fields: () => Record<string, number | string>): void {
    this.total++;
    const now = performance.now();
    if (now - this.lineAt < REFUSING_LINE_MS) return;
    this.log.warn({ refused: this.total - this.totalAtLine, refusedTotal: this.total, ...fields() }, this.message);
    this.lineAt = now;
    this.totalAtLine = this.total;
  }
}
