import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger that becomes pino's child logger, with the request id bound, only when the
 * request logs something: at the default ACCESS_LOG=minimal most requests log nothing, and pino's
 * `child()` serializes the bindings and builds a logger each time (docs/development.md).
 */
class RequestLogger implements FastifyBaseLogger {
  #real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
  ) {}

  #added: Bindings | undefined;

  get #logger(): FastifyBaseLogger {
    return (this.#real ??= this.parent.child(this.#added === undefined ? this.bindings : { ...this.bindings, ...this.#added }));
  }

  /** Adds bindings to every line this logger writes, without making pino's child before a line is written. */
  bind(bindings: Bindings): void {
    if (this.#real !== undefined) (this.#real as FastifyBaseLogger & { setBindings(bindings: Bindings): void }).setBindings(bindings);
    else this.#added = this.#added === undefined ? bindings : { ...this.#added, ...bindings };
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
 * The `request-logger` plugin: each request's `request.log` and `reply.log`, a logger of `root`
 * with the request id bound (`requestId`), set by the first onRequest hook. Fastify runs without
 * a logger of its own: with one, it makes a logger for every request through its
 * `childLoggerFactory`, which costs more than the rest of the request's logging (an object with a
 * computed key, that V8 builds in its runtime, and a check of the logger's methods; docs/development.md).
 *
 * @example
 * await app.register(requestLogger, { root: pino() }); // request.log.info(...) writes with the request id
 */
export const requestLogger = fp<{ root: FastifyBaseLogger }>(
  async (app, { root }) => {
    app.addHook('onRequest', function requestLogger(request, reply, done) {
      const logger = new RequestLogger(root, { requestId: request.id });
      request.log = logger;
      reply.log = logger;
      done();
    });
  },
  { name: 'request-logger', fastify: '5.x' },
);

/**
 * Adds bindings to a request's logger: to the lazy one in place (no logger is built until a line
 * is written), to any other as pino's child.
 *
 * @example
 * request.log = withBindings(request.log, { trace_id: traceId, span_id: spanId });
 */
export function withBindings(logger: FastifyBaseLogger, bindings: Bindings): FastifyBaseLogger {
  if (!(logger instanceof RequestLogger)) return logger.child(bindings);
  logger.bind(bindings);
  return logger;
}
