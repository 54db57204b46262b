import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Level = FastifyBaseLogger['level'];

type LogMethod = (...args: unknown[]) => void;

/**
 * A request's logger that becomes a real pino child (with the request id bound) only when
 * something logs through it. Fastify makes a child logger for every request; most requests here
 * log nothing through it (their one line is written by `logAndCountAnswers` with the root logger),
 * and a pino child costs more than the rest of a small request's bookkeeping.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The pino child, made on first use. */
  get real(): FastifyBaseLogger {
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

  declare fatal: LogMethod;
  declare error: LogMethod;
  declare warn: LogMethod;
  declare info: LogMethod;
  declare debug: LogMethod;
  declare trace: LogMethod;
  declare silent: LogMethod;
}

// Each level forwards to the real child, made on first use.
for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
  LazyRequestLogger.prototype[level] = function (this: LazyRequestLogger, ...args: unknown[]) {
    const real = this.real;
    Reflect.apply(real[level], real, args);
  };
}

/** Fastify's `childLoggerFactory`: a child that costs nothing until used. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
