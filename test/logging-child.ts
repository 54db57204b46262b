import { spawn, type ChildProcess } from 'node:child_process';

const MODULE = new URL('../src/http/observability/log-destination.ts', import.meta.url).href;

/**
 * A child process that runs `script` with `logger`, a pino logger writing through
 * `logDestination(flushMs, backlogBytes)` (src/http/observability/log-destination.ts), and `droppedLogLines` in
 * scope; its stdout is `stdout` (a pipe unless given), stderr a pipe. Used by
 * test/log-destination.test.ts.
 *
 * @example
 * const child = spawnLoggingChild("logger.info('hello')", { flushMs: 250, backlogBytes: 8 * 1024 * 1024 });
 */
export function spawnLoggingChild(
  script: string,
  {
    flushMs,
    backlogBytes,
    stdout = 'pipe',
    pinoOptions = '{ base: null }',
  }: { flushMs: number; backlogBytes: number; stdout?: 'pipe' | number; pinoOptions?: string },
): ChildProcess {
  return spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import pino from 'pino'; import { logDestination, droppedLogLines } from ${JSON.stringify(MODULE)}; const logger = pino(${pinoOptions}, logDestination(${flushMs}, ${backlogBytes})); ${script}`,
    ],
    { stdio: ['ignore', stdout, 'pipe'], cwd: new URL('..', import.meta.url) },
  );
}
