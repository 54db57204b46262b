import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import type { Config } from '../../config.js';
import { logDestination } from './log-destination.js';

/**
 * The text Fastify's own "listening" line is given (`listen`'s `listenTextResolver`): the logger
 * drops it, because the runner writes the one listening line, with the docs URL in it.
 */
export const FRAMEWORK_LISTENING_TEXT = 'fastify: server listening';

/** pino's hooks for every logger of the service (the cluster's primary's too): Fastify's listening line goes. */
export const LOG_HOOKS = {
  logMethod(this: unknown, args: unknown[], method: (...args: unknown[]) => void) {
    if (args[0] !== FRAMEWORK_LISTENING_TEXT) method.apply(this, args);
  },
};

/** A logger other than the configuration's (for tests): none, or pino at a level writing to a stream. */
export type LoggerSetting = false | { readonly level: Level; readonly stream: DestinationStream };

/**
 * The service's logger: pino at LOG_LEVEL, to standard output as LOG_FORMAT says
 * (log-destination.ts for JSON lines, pino-pretty's transport for people), or as `setting` says.
 *
 * @example
 * serviceLogger(DEFAULT_CONFIG).info('ready'); // {"level":30,...,"msg":"ready"}
 */
export function serviceLogger(config: Config, setting?: LoggerSetting): Logger {
  if (setting === false) return pino({ enabled: false });
  if (setting !== undefined) return pino({ level: setting.level, hooks: LOG_HOOKS }, setting.stream);
  const base = { level: config.logLevel, hooks: LOG_HOOKS } as const;
  if (config.logFormat === 'pretty') return pino({ ...base, transport: { target: 'pino-pretty' } });
  return pino(base, logDestination(config.logFlushMs, config.logBacklogBytes));
}
