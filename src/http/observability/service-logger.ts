import type { FastifyServerOptions } from 'fastify';
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

/**
 * Fastify's logger option for a configuration: pino at LOG_LEVEL, to standard output as
 * LOG_FORMAT says (log-destination.ts for JSON lines, pino-pretty's transport for people).
 *
 * @example
 * Fastify({ logger: loggerFor(DEFAULT_CONFIG) });
 */
export function loggerFor(config: Config): FastifyServerOptions['logger'] {
  const base = { level: config.logLevel, hooks: LOG_HOOKS } as const;
  if (config.logFormat === 'pretty') return { ...base, transport: { target: 'pino-pretty' } };
  return { ...base, stream: logDestination(config.logFlushMs, config.logBacklogBytes) };
}
