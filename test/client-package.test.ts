import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

// packages/client, json-utility-client: a package of its own, with no dependencies, built from the
// operation declarations, packaged as npm, bundlers and TypeScript expect, and small.

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const client = join(root, 'packages/client');
const bin = (name: string) => join(root, 'node_modules/.bin', name);

test('its operations are what the declarations give (scripts/client-operations.ts --check)', async () => {
  await run(process.execPath, ['--import', 'tsx', 'scripts/client-operations.ts', '--check'], { cwd: root });
});

test('no runtime dependency, and its built code imports nothing', () => {
  const manifest = JSON.parse(readFileSync(join(client, 'package.json'), 'utf8')) as Record<string, unknown>;
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies']) assert.equal(manifest[field], undefined, field);
  let found = 0;
  for (const file of readdirSync(join(client, 'dist')).filter((name) => name.endsWith('.js'))) {
    const imports = [...readFileSync(join(client, 'dist', file), 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]/g)].map(
      (m) => m[1],
    );
    for (const specifier of imports) assert.match(specifier ?? '', /^\.\/[\w-]+\.js$/, `${file} imports ${specifier}`);
    found += imports.length;
  }
  // The pattern finds imports at all: index.js imports its siblings.
  assert.ok(found > 0, 'no import found in dist/: the pattern reads nothing');
});

test('npm pack holds its built files, README and LICENSE only', async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: client });
  const files = (JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
  for (const path of files) assert.match(path, /^(dist\/[\w-]+\.(js|d\.ts)|package\.json|README\.md|LICENSE)$/, path);
  for (const needed of ['dist/index.js', 'dist/index.d.ts', 'dist/operations.js', 'package.json', 'README.md', 'LICENSE'])
    assert.ok(files.includes(needed), needed);
});

test('publint and @arethetypeswrong/cli (ESM only) find nothing', async () => {
  const lint = await run(bin('publint'), ['--strict'], { cwd: client });
  assert.match(lint.stdout, /All good!/);
  // ESM only: a CommonJS require is not offered, as the package says ("type": "module", no "require" condition).
  await run(bin('attw'), ['--pack', '.', '--profile', 'esm-only', '--format', 'table-flipped'], { cwd: client });
});

test('its types resolve under moduleResolution bundler, node16 and nodenext', async (t) => {
  const consumer = mkdtempSync(join(tmpdir(), 'json-utility-client-types-'));
  t.after(() => rmSync(consumer, { recursive: true, force: true }));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(client, join(consumer, 'node_modules/json-utility-client'));
  writeFileSync(join(consumer, 'package.json'), '{"type":"module"}');
  writeFileSync(
    join(consumer, 'use.ts'),
    "import { createClient, ProblemError } from 'json-utility-client';\n" +
      "const answer: { ret: boolean } = await createClient({ baseUrl: 'http://127.0.0.1:3000' }).isEven({ input: 4 });\n" +
      'export const checked = [answer, ProblemError];\n',
  );
  for (const [module, resolution] of [
    ['esnext', 'bundler'],
    ['node16', 'node16'],
    ['nodenext', 'nodenext'],
  ] as const) {
    const options = ['--noEmit', '--strict', '--target', 'es2022', '--lib', 'es2022,dom', '--module', module, '--moduleResolution', resolution, 'use.ts'];
    await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), ...options], { cwd: consumer }).catch(
      (error: { stdout: string; stderr: string }) => assert.fail(`moduleResolution ${resolution}:\n${error.stdout}${error.stderr}`),
    );
  }
});

/** The bytes, minified and gzipped, of a browser bundle of `source` importing the package. */
async function bundled(source: string): Promise<number> {
  const result = await build({
    stdin: { contents: source, resolveDir: root, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    alias: { 'json-utility-client': join(client, 'dist/index.js') },
  });
  return gzipSync(result.outputFiles[0]?.contents ?? new Uint8Array()).length;
}

test('the whole client, bundled and minified for browsers, is at most 6 KB gzip; one import alone is smaller', async () => {
  const whole = await bundled("export * from 'json-utility-client';");
  assert.ok(whole <= 6 * 1024, `${whole} bytes`);
  // Tree-shaking: an import of the error class alone leaves the client out ("sideEffects": false).
  const one = await bundled("export { ProblemError } from 'json-utility-client';");
  assert.ok(one < whole / 4, `${one} bytes of ${whole}`);
  process.stdout.write(`# the whole client ${whole} bytes gzip; ProblemError alone ${one}\n`);
});
