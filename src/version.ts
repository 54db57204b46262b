import { readFileSync } from 'node:fs';

/** The package's version, from its package.json (`json-utility --version`, the tracer's scope). */
export const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
