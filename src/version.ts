import { readFileSync } from 'node:fs';

const PACKAGE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string; engines: { node: string } };

/** The package's version, from its package.json (`json-utility --version`, the tracer's scope). */
export const VERSION = PACKAGE.version;

/** The Node.js lines package.json's `engines` accepts, as `^X.Y.Z || ^X.Y.Z ...` (node-version.ts). */
export const ENGINES = PACKAGE.engines.node;
