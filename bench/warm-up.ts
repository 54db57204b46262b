import { generateLoad, type Load, type LoadGenerator } from './load.js';
import { scenarios, type Scenario } from './scenarios.js';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Requests every target answers with an error: a bad body (400), an unknown path (404), a method the path does not take (405). */
const BAD_REQUESTS: ReadonlyArray<Pick<Scenario, 'method' | 'path' | 'body'>> = [
  { method: 'POST', path: '/api/isEven', body: '{"input":"twelve"}' },
  { method: 'POST', path: '/api/sort', body: '{"input":' },
  { method: 'GET', path: '/api/nothing-here' },
  { method: 'DELETE' as 'GET', path: '/api/sort' },
];

/** How many times the mixed requests are sent one at a time before anything is measured. */
export const WARM_UP_PASSES = 20;

/** The mixed requests of the warm-up: every scenario, then every bad request. */
export function mixedRequests(): Array<Pick<Scenario, 'method' | 'path' | 'body'>> {
  return [...scenarios(), ...BAD_REQUESTS];
}

/**
 * One request, its answer parsed as JSON when it is JSON.
 *
 * @example
 * await call('http://127.0.0.1:3000', { method: 'GET', path: '/api/isOdd/3' }) //=> { status: 200, answer: { ret: true }, ms: 1.2 }
 */
export async function call(base: string, request: Pick<Scenario, 'method' | 'path' | 'body'>): Promise<{ status: number; answer: unknown; ms: number }> {
  const started = performance.now();
  const response = await fetch(base + request.path, {
    method: request.method,
    ...(request.body === undefined ? {} : { body: request.body, headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  const ms = performance.now() - started;
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = text;
  }
  return { status: response.status, answer, ms };
}

/**
 * The load generator's load of one scenario on a server, its body in a file of `workDir`.
 *
 * @example
 * await generateLoad('wrk', { ...loadOf(base, scenario, workDir, 50), seconds: 5 }, ['taskset', '-c', '1'], workDir)
 */
export function loadOf(base: string, scenario: Scenario, workDir: string, defaultConnections: number, requestsPerConnection?: number): Omit<Load, 'seconds'> {
  const bodyFile = join(workDir, `${scenario.id}.json`);
  if (scenario.body !== undefined && !existsSync(bodyFile)) writeFileSync(bodyFile, scenario.body);
  const connections = scenario.connections ?? defaultConnections;
  return {
    url: base + scenario.path,
    method: scenario.method,
    ...(scenario.body === undefined ? {} : { bodyFile }),
    connections,
    ...(requestsPerConnection === undefined ? {} : { requests: requestsPerConnection * connections }),
  };
}

export interface WarmUp {
  /** Passes of the mixed requests, one at a time. */
  readonly passes: number;
  /** Passes of every scenario under load, one second each. */
  readonly loads: number;
  readonly generator: LoadGenerator;
  /** How the load generator is pinned, e.g. `taskset -c 1`. */
  readonly pin: readonly string[];
  readonly workDir: string;
  readonly connections: number;
  /** autocannon only (the smoke run): requests a connection instead of a second. */
  readonly requestsPerConnection?: number;
}

/**
 * The mixed warm-up every target gets before it is measured: the mixed requests `passes` times one
 * at a time, then every scenario under load, `loads` times over. A process that has seen one kind
 * of request only measures faster than it will serve; one that has seen a few hundred requests one
 * at a time is still settling, and its first load under concurrency shows it.
 *
 * @example
 * await warmUp(target.base, { passes: WARM_UP_PASSES, loads: 3, generator: 'wrk', pin: [], workDir, connections: 50 })
 */
export async function warmUp(base: string, options: WarmUp): Promise<void> {
  for (let pass = 0; pass < options.passes; pass++) for (const request of mixedRequests()) await call(base, request);
  for (let pass = 0; pass < options.loads; pass++)
    for (const scenario of scenarios()) {
      const load = loadOf(base, scenario, options.workDir, options.connections, options.requestsPerConnection);
      await generateLoad(options.generator, { ...load, seconds: 1 }, options.pin, options.workDir);
    }
}
