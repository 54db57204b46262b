import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { TestContext } from 'node:test';
import { START_FLAGS } from '../scripts/start-flags.js';
import { duplicateKeys } from './json-keys.js';

const ROOT = new URL('..', import.meta.url).pathname;
/** The built entry point. */
export const ENTRY = `${ROOT}dist/main.js`;
/** Node's arguments as `npm start` gives them: its flags, then the entry point. */
export const START_ARGS: readonly string[] = [...START_FLAGS, ENTRY];
// Built (incrementally: a moment when nothing changed) before any test of this file starts one, so
// that a test file run alone never runs a stale build; a process started from TypeScript through
// tsx takes about 0.8 s longer to listen, which the suite's many processes add up.
execFileSync(process.execPath, [`${ROOT}node_modules/typescript/bin/tsc`, '-b', 'tsconfig.json'], { cwd: ROOT });

export interface RunningServer {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT` */
  base: string;
  port: number;
  output(): string;
  errors(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/**
 * Starts the real entry point (the built `dist/main.js` with `npm start`'s flags, or the node arguments in `entry`) on a free port and waits until it announces itself.
 * Whatever the test's outcome, the process group is killed when the test ends.
 */
export async function startServer(t: TestContext, env: Record<string, string> = {}, entry: readonly string[] = START_ARGS): Promise<RunningServer> {
  const child = spawn(process.execPath, entry, {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so that workers and helpers go with it
  });
  let stdout = '';
  t.after(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // already gone
    }
    // Every JSON log line the service wrote is one object with no key given twice (a reader keeps one).
    for (const line of stdout.split('\n').slice(0, -1)) {
      if (!line.startsWith('{')) continue;
      const twice = duplicateKeys(line);
      if (twice.length > 0) throw new Error(`a log line gives ${twice.join(', ')} twice: ${line}`);
    }
  });
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const deadline = Date.now() + 20_000;
  while (!/listening on (http:\/\/[^\s"]+)/.test(stdout)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${stdout}\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const base = /listening on (http:\/\/[^\s"]+)/.exec(stdout)?.[1] as string;
  return { child, base, port: Number(new URL(base).port), output: () => stdout, errors: () => stderr, exited };
}
