import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Level = FastifyBaseLogger['level'];

type LogMethod = (...args: unknown[]) => void;

/**
 * A request's logger that becomes a real pino child (with the request id bound) only when
 * something logs through it. Fastify makes a child logger for every request; most requests here
 * log nothing through it (their one line is written by `observeRequests` with the root logger),
 * and a pino child costs more than the rest of a small request's bookkeeping.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): Level {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: Level) {
    this.real.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    (this.real.fatal as LogMethod)(...args);
  }
  error(...args: unknown[]): void {
    (this.real.error as LogMethod)(...args);
  }
  warn(...args: unknown[]): void {
    (this.real.warn as LogMethod)(...args);
  }
  info(...args: unknown[]): void {
    (this.real.info as LogMethod)(...args);
  }
  debug(...args: unknown[]): void {
    (this.real.debug as LogMethod)(...args);
  }
  trace(...args: unknown[]): void {
    (this.real.trace as LogMethod)(...args);
  }
  silent(...args: unknown[]): void {
    (this.real.silent as LogMethod)(...args);
  }
}

/** Fastify's `childLoggerFactory`: a child that costs nothing until used. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
