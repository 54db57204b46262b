import { DiagLogLevel, diag, type DiagLogger } from '@opentelemetry/api';
import { diagLogLevelFromString, setGlobalErrorHandler } from '@opentelemetry/core';
import type { FastifyBaseLogger } from 'fastify';

/** At most this many of the SDK's lines a minute reach the log; the next line written says how many were left out. */
const SDK_LINES_PER_MINUTE = 10;
// Lines said before the service's logger exists (the SDK reads its settings at start) wait for it, this many at most.
const WAITING_LINES_MAX = 20;

type PinoLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

export interface TracingDiagnostics {
  /** From now on the SDK's lines go to this logger (the lines said before it are written first). */
  writeTo(logger: FastifyBaseLogger): void;
}

/**
 * Sends OpenTelemetry's own complaints (a bad setting, an export that failed) to the service's log
 * as JSON lines, at most SDK_LINES_PER_MINUTE a minute, instead of the SDK's console lines and
 * stack traces on standard error. `level` is OTEL_LOG_LEVEL (`warn` when unset).
 *
 * @example
 * const diagnostics = routeDiagnostics(process.env.OTEL_LOG_LEVEL); diagnostics.writeTo(app.serviceLog);
 */
export function routeDiagnostics(level: string | undefined): TracingDiagnostics {
  let logger: FastifyBaseLogger | undefined;
  const waiting: Array<[PinoLevel, string]> = [];
  let windowStart = 0;
  let written = 0;
  let suppressed = 0;
  const write = (pinoLevel: PinoLevel, message: string): void => {
    if (logger === undefined) {
      if (waiting.length < WAITING_LINES_MAX) waiting.push([pinoLevel, message]);
      return;
    }
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      written = 0;
    }
    if (written >= SDK_LINES_PER_MINUTE) {
      suppressed++;
      return;
    }
    written++;
    logger[pinoLevel]({ source: 'opentelemetry', ...(suppressed > 0 ? { suppressed } : {}) }, message);
    suppressed = 0;
  };
  // The SDK's messages come as a format and values (console.log style): one line of text.
  const line = (message: string, args: unknown[]): string =>
    [message, ...args.map((arg) => (arg instanceof Error ? arg.message : typeof arg === 'string' ? arg : JSON.stringify(arg)))].join(' ').slice(0, 2048);
  const sink: DiagLogger = {
    error: (message, ...args) => write('error', line(message, args)),
    warn: (message, ...args) => write('warn', line(message, args)),
    info: (message, ...args) => write('info', line(message, args)),
    debug: (message, ...args) => write('debug', line(message, args)),
    verbose: (message, ...args) => write('trace', line(message, args)),
  };
  // OTEL_LOG_LEVEL read as NodeSDK reads it (an unknown value is INFO), `warn` when unset.
  diag.setLogger(sink, { logLevel: diagLogLevelFromString(level) ?? DiagLogLevel.WARN, suppressOverrideMessage: true });
  // An export that failed reaches the SDK's error handler, whose default writes the error's every property, stack included.
  setGlobalErrorHandler((error) => {
    const { message, code } =
      error instanceof Error ? (error as Error & { code?: unknown }) : { message: typeof error === 'string' ? error : JSON.stringify(error), code: undefined };
    write('warn', `could not export spans: ${message}${typeof code === 'string' ? ` (${code})` : ''}`);
  });
  return {
    writeTo(to) {
      logger = to;
      for (const [pinoLevel, message] of waiting.splice(0)) write(pinoLevel, message);
    },
  };
}
