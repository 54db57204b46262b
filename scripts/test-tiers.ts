import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The test tiers (docs/development.md, "Tests"), declared once: `scripts/run-tests.ts` runs them and
 * test/tiers.test.ts checks them. Each file is in exactly one of unit, quick, slow and serial.
 */

/** No socket, no process: the core, the engine and the HTTP answers through Fastify's `inject`. */
export const UNIT: readonly string[] = [
  'test/core/is-number.test.ts',
  'test/core/parity.test.ts',
  'test/core/sort.test.ts',
  'test/core/string-split.test.ts',
  'test/core/to-string.test.ts',
  'test/engine/json-text.test.ts',
  'test/engine/line-stream.test.ts',
  'test/config.test.ts',
  'test/operations-everywhere.test.ts',
  'test/tiers.test.ts',
  'test/http/batch-equivalence.test.ts',
  'test/http/caching.test.ts',
  'test/http/docs-headers.test.ts',
  'test/http/legacy.test.ts',
  'test/http/memory-budget.test.ts',
  'test/http/openapi-answers.test.ts',
  'test/http/openapi-examples.test.ts',
  'test/http/operations.test.ts',
  'test/http/protocol.test.ts',

  'test/http/request-durations.test.ts',
  'test/json-keys.test.ts',
];

/** Seconds each, beside the unit tier: the time and memory bounds, the HTTP tests over sockets. */
export const QUICK: readonly string[] = [
  'test/http/overload-control.test.ts',
  'test/http/caching-clients.test.ts',
  'test/core/graphemes-exhaustive.test.ts',
  'test/core/sort-bounds.test.ts',
  'test/core/time-bounds.test.ts',
  'test/deploy.test.ts',
  'test/http/admission.test.ts',
  'test/http/clients-gone.test.ts',
  'test/http/early-answers.test.ts',
  'test/http/observability.test.ts',
  'test/http/openapi.test.ts',
  'test/http/openapi-generated.test.ts',
  'test/http/request-path.test.ts',
  'test/http/time-bounds.test.ts',
];

/** Run one at a time, apart from the rest: they load the machine and would disturb timing-sensitive tests. */
export const SERIAL: readonly string[] = [
  'test/hostile-load.test.ts',
  'test/shutdown-load.test.ts',
  'test/stream-gigabyte.test.ts',
  'test/memory-estimates.test.ts',
  'test/bench.test.ts',
];

/**
 * Every test file under test/ but the deployment tests (test/deploy/, `npm run test:deploy`).
 *
 * @example
 * allTestFiles().includes('test/core/sort.test.ts') //=> true
 */
export function allTestFiles(root = new URL('..', import.meta.url).pathname): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (path !== 'test/deploy') walk(path);
      } else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  walk('test');
  return found.sort();
}

/**
 * The rest: processes, the cluster, the CLI, the browser, the installed package, the limits at their edges.
 *
 * @example
 * slowTestFiles().includes('test/http/limits.test.ts') //=> true
 */
export function slowTestFiles(): string[] {
  const named = new Set([...UNIT, ...QUICK, ...SERIAL]);
  return allTestFiles().filter((file) => !named.has(file));
}
