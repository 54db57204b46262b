import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger that becomes pino's child logger, with the request id bound, only when the
 * request logs something. Fastify makes a child logger for every request, and at the default
 * ACCESS_LOG=minimal most requests log nothing: pino's `child()` serializes the bindings and
 * builds a logger each time (bench/results/per-request says what it cost).
 */
class RequestLogger implements FastifyBaseLogger {
  #real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get #logger(): FastifyBaseLogger {
    return (this.#real ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#logger.level;
  }

  set level(level: string) {
    this.#logger.level = level;
  }

  // Methods on the prototype, not fields: a request's logger is one small object.
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }

  #log(level: Level, args: unknown[]): void {
    const logger = this.#logger;
    Reflect.apply(logger[level], logger, args);
  }
}

/**
 * Fastify's `childLoggerFactory`: each request's logger is made the first time it logs.
 *
 * @example
 * Fastify({ logger, childLoggerFactory: lazyRequestLogger }); // request.log.info(...) makes pino's child then
 */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options);
}
