import { ConfigError, loadConfig } from './config.js';
import { DOCS_PATH } from './http/openapi.js';
import { buildApp } from './server.js';

/** Runs the service: reads the environment, listens, and closes cleanly on SIGTERM or SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Invalid configuration:\n${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }

  const app = await buildApp(config);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.log.info({ signal }, 'closing: no new connections, finishing requests in flight');
      app.close().then(
        () => process.exit(0),
        (error: unknown) => {
          app.log.error({ err: error }, 'close failed');
          process.exit(1);
        },
      );
    });
  }

  const address = await app.listen({ port: config.port, host: config.host });
  const base = address.replace('://[::1]', '://localhost');
  app.log.info(`docs: ${base}${DOCS_PATH}`);
  process.stdout.write(`JSON utility service listening on ${base}\nAPI docs: ${base}${DOCS_PATH}\n`);
}

await main();
