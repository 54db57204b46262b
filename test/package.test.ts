import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
// Imported by name, as a user would; held in a variable so that the typecheck, which runs before
// prepack has compiled dist/, does not look for it.
const PACKAGE = 'json-utility-service';

test('npm pack ships the compiled library, its types and the entry points, and nothing else', async () => {
  // prepack compiles to dist/ first, so the imports below use what a user would install.
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts=false'], { cwd: root, maxBuffer: 10 * 1024 * 1024 });
  const files = (JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
  // The client package rides along as a bundled dependency, its own packed files only (test/client-package.test.ts).
  const own = /^(node_modules\/json-utility-client\/)?(dist\/.*\.(js|d\.ts)|package\.json|README\.md|LICENSE)$/;
  for (const path of files) assert.match(path, own, path);
  for (const needed of [
    'dist/core/index.js',
    'dist/core/index.d.ts',
    'dist/app.js',
    'dist/app.d.ts',
    'dist/server.js',
    'dist/main.js',
    'dist/cli.js',
    'package.json',
    'README.md',
    'LICENSE',
  ]) {
    assert.ok(files.includes(needed), needed);
  }
});

test('the package exports the pure operations, each documented with an example', async () => {
  const library = (await import(PACKAGE)) as typeof import('../src/core/index.js');
  assert.deepEqual(library.sort([10, 9, 1.5]), [1.5, 9, 10]);
  assert.equal(library.isEven('9007199254740993'), false);
  assert.equal(library.isOdd('0x1F'), true);
  assert.equal(library.isNumber(' 0x1F '), true);
  assert.equal(library.toString({ b: 1, a: [true] }), '{"a":[true],"b":1}');
  assert.deepEqual(library.stringSplit('👍🏽e\u0301', ''), ['👍🏽', 'e\u0301']);
  const { readFile } = await import('node:fs/promises');
  const types = await readFile(new URL('../dist/core/index.d.ts', import.meta.url), 'utf8');
  for (const name of ['sort', 'isEven', 'isOdd', 'isNumber', 'toString', 'stringSplit']) assert.match(types, new RegExp(`\\b${name}\\b`));
  for (const file of ['sort', 'parity', 'is-number', 'to-string', 'string-split']) {
    const declaration = await readFile(new URL(`../dist/core/${file}.d.ts`, import.meta.url), 'utf8');
    assert.match(declaration, /@example/, `${file}.d.ts keeps its doc comment`);
  }
});

test('the client is a package of its own, which the service carries for its CLI, not a copy', () => {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: object; bundleDependencies: string[]; dependencies: object };
  assert.ok(!('./client' in manifest.exports));
  assert.deepEqual(manifest.bundleDependencies, ['json-utility-client']);
  assert.ok('json-utility-client' in manifest.dependencies);
  assert.match(readFileSync(join(root, 'src/cli-lines.ts'), 'utf8'), /from 'json-utility-client'/);
});

test('json-utility-service/app embeds the service under any prefix', async (t) => {
  const { buildApp } = (await import(`${PACKAGE}/app`)) as typeof import('../src/app.js');
  const app = await buildApp({}, { logger: false, prefix: '/tools/json' });
  t.after(() => app.close());
  assert.equal((await app.inject({ method: 'GET', url: '/tools/json/isEven/4' })).body, '{"ret":true}');
  assert.equal((await app.inject({ method: 'GET', url: '/tools/json/openapi.json' })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: '/tools/json/docs' })).statusCode, 200);
  assert.equal((await app.inject({ method: 'GET', url: '/api/isEven/4' })).statusCode, 404);
  const legacy = await app.inject({ method: 'POST', url: '/is-odd', headers: { 'content-type': 'application/json' }, payload: '{"number":3}' });
  assert.equal(legacy.headers.link, '</tools/json/isOdd>; rel="successor-version"');
  await assert.rejects(buildApp({}, { logger: false, prefix: 'api/' }), /prefix must look like/);
});

// `npm ci` runs no dependency's install script that package.json's allowScripts has not decided,
// and warns about each undecided one (docs/development.md says why each is denied).
test('every dependency with an install script is decided in package.json (allowScripts)', async () => {
  const { stdout } = await promisify(execFile)('npm', ['install-scripts', 'ls'], { cwd: root });
  assert.match(stdout, /^No packages with unreviewed install scripts\./);
  const { allowScripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
  assert.deepEqual(allowScripts, { '@scarf/scarf': false, esbuild: false, protobufjs: false });
});
