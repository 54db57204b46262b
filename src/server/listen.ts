import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { formatBytes, SETTINGS, type Config } from '../config.js';
import { buildAdminApp, type ProbeSources } from '../http/observability/probes.js';
import { DOCS_PATH } from '../http/operations/openapi.js';
import { FRAMEWORK_LISTENING_TEXT } from '../http/observability/service-logger.js';
import { EXIT_CANNOT_LISTEN } from './cluster-messages.js';

const MIB = 1024 * 1024;

/**
 * The one line that says the service is up, with the docs URL and the memory it has: written at
 * level info whatever LOG_LEVEL says (but `silent`), so that whoever started it sees where it is.
 *
 * @example
 * announce(app.serviceLog, 'info', 'http://127.0.0.1:3000', 1, '512 MiB', undefined);
 */
export function announce(
  log: FastifyBaseLogger,
  logLevel: Config['logLevel'],
  address: string,
  workers: number,
  memory: string,
  admin: string | undefined,
): void {
  if (logLevel === 'silent') return;
  const local = (url: string) => url.replace('://[::1]', '://localhost');
  const base = local(address);
  const across = workers > 1 ? ` (${workers} workers)` : '';
  const inCluster = workers > 1 ? { workers } : {};
  const probes = admin === undefined ? {} : { admin: local(admin) };
  log.child({}, { level: 'info' }).info({ address: base, docs: `${base}${DOCS_PATH}`, ...probes, ...inCluster, memory }, `listening on ${base}${across}`);
  (log as { flush?: () => void }).flush?.();
}

/** Why a server could not listen on `port`, in one line naming the address and the settings that choose it; undefined for other errors. */
function listenFailure(error: NodeJS.ErrnoException, config: Config, port: 'port' | 'adminPort'): string | undefined {
  const where = `${config.host}:${config[port]}`;
  const settings = `${SETTINGS[port].env} or ${SETTINGS.host.env}`;
  if (error.code === 'EADDRINUSE') return `Cannot listen on ${where}: the address is in use by another process; set ${settings} to another (EADDRINUSE)`;
  if (error.code === 'EACCES') return `Cannot listen on ${where}: permission denied (ports below 1024 need privileges); set ${settings} to another (EACCES)`;
  if (error.code === 'EADDRNOTAVAIL') return `Cannot listen on ${where}: this machine has no such address; set ${settings} to one of its own (EADDRNOTAVAIL)`;
  return undefined;
}

/**
 * Listens on PORT or ADMIN_PORT at HOST; a failure with a known cause goes to standard error and ends the process.
 *
 * @example
 * const address = await listenOrExit(app, config, 'port'); //=> 'http://127.0.0.1:3000'
 */
export async function listenOrExit(app: FastifyInstance, config: Config, port: 'port' | 'adminPort'): Promise<string> {
  try {
    return await app.listen({ port: config[port] as number, host: config.host, listenTextResolver: () => FRAMEWORK_LISTENING_TEXT });
  } catch (error) {
    const failure = listenFailure(error as NodeJS.ErrnoException, config, port);
    if (failure === undefined) throw error;
    process.stderr.write(`${failure}\n`);
    process.exit(cluster.isWorker ? EXIT_CANNOT_LISTEN : 1);
  }
}

/**
 * The admin port (ADMIN_PORT) listening with these probes: its address, or undefined when it is off.
 *
 * @example
 * await serveAdmin(config, { ready: () => true, metrics }, log); //=> 'http://127.0.0.1:9090'
 */
export async function serveAdmin(config: Config, sources: ProbeSources, log: FastifyBaseLogger): Promise<string | undefined> {
  return config.adminPort === 'off' ? undefined : listenOrExit(await buildAdminApp(sources, log), config, 'adminPort');
}

/**
 * More workers than the CPUs the process may run on share them: each worker's requests wait behind
 * the others' work as well as its own, so waits are longer at the same load, and overload control
 * refuses sooner (docs/operations.md, "Several cores").
 *
 * @example
 * workersWarning(2, 1); //=> 'WORKERS=2 is more than the 1 CPU this process may run on: ...'
 * workersWarning(2, 2); //=> undefined
 */
export function workersWarning(workers: number, cpus = availableParallelism()): string | undefined {
  if (workers <= cpus) return undefined;
  return (
    `${SETTINGS.workers.env}=${workers} is more than the ${cpus} CPU${cpus === 1 ? '' : 's'} this process may run on: the workers share ${cpus === 1 ? 'it' : 'them'}, ` +
    `each request waits behind the other workers' work too, and overload control (${SETTINGS.overloadTargetMs.env}) refuses at a lower load; ${SETTINGS.workers.env}=auto runs one a CPU`
  );
}

/**
 * The V8 heap must not count on more than the process may use, or the kernel's OOM killer comes
 * before the garbage collector. The pool threads get their heap limit from the budget; the
 * event loop's heap is set by `--max-old-space-size` (cluster workers get one from their share).
 *
 * @example
 * heapWarning(256 * 1024 * 1024); //=> 'the V8 heap limit (4 GiB) is above ...' or undefined
 */
export function heapWarning(limit: number): string | undefined {
  const heap = getHeapStatistics().heap_size_limit;
  if (heap <= limit) return undefined;
  return `the V8 heap limit (${formatBytes(heap)}) is above this process's memory limit (${formatBytes(limit)}): start node with --max-old-space-size=${Math.floor(limit / MIB / 2)} (NODE_OPTIONS), as deploy/Dockerfile does`;
}
