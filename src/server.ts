import cluster from 'node:cluster';
import { ConfigError, loadConfig, workerCount, type Config } from './config.js';
import { supervise } from './server/cluster-supervisor.js';
import { serve } from './server/serve.js';

/**
 * Running the service: one process (server/serve.ts), or with WORKERS > 1 a primary that keeps
 * that many workers serving one port (server/cluster-supervisor.ts); a signal drains them
 * (server/shutdown.ts).
 */

/**
 * The configuration from `env`, or exit 2 with a message naming each bad variable.
 *
 * @example
 * const config = readConfig(); // PORT=abc: "Invalid configuration: PORT ..." and exit 2
 */
export function readConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`Invalid configuration:\n${error.message}\n`);
    process.exit(2);
  }
}

/**
 * Serves with this configuration: in this process, or as the primary of WORKERS processes.
 *
 * @example
 * await run(readConfig());
 */
export async function run(config: Config): Promise<void> {
  const workers = workerCount(config);
  if (workers > 1 && cluster.isPrimary) await supervise(config, workers);
  else await serve(config, workers);
}
