import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Node.js flags a checkout's `npm start` gives the service (its package.json's `start` script).
 *
 * @example
 * startFlagsOf('/tmp/before') //=> [] for a checkout whose script is `node dist/main.js`
 */
export function startFlagsOf(checkout: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = scripts.start.split(' ');
  if (words[0] !== 'node' || words.at(-1) !== 'dist/main.js')
    throw new Error(`${checkout}: the start script is not "node [FLAGS] dist/main.js": ${scripts.start}`);
  return words.slice(1, -1);
}

/**
 * This checkout's: the Dockerfile's CMD repeats them (test/deploy.test.ts), and the tests and the
 * bench start the service with them, as it runs. Why each: docs/operations.md, "Node.js flags".
 *
 * @example
 * spawn(process.execPath, [...START_FLAGS, 'dist/main.js']) // START_FLAGS: ['--max-semi-space-size=4']
 */
export const START_FLAGS: readonly string[] = startFlagsOf(new URL('..', import.meta.url).pathname);
