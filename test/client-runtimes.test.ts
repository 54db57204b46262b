import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { launchChromium } from './browser/chromium.js';

// json-utility-client in every runtime it claims, against the real service: the same checks
// (test/client-runtimes/checks.ts, bundled with the package's built module: every operation in both forms, a ProblemError, the batching,
// timeouts and signal, gzip bodies, the stream) in Node.js, Deno, Bun, Chromium (a page on another
// origin, so CORS is exercised) and Cloudflare's workerd through miniflare. Deno, Bun and miniflare
// come from the npm registry, pinned, installed once into CLIENT_RUNTIMES_DIR (by default
// ~/.cache/json-utility-service/client-runtimes); a runtime that cannot start fails its test and says why.

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const RUNTIMES = { deno: '2.9.6', bun: '1.4.4', miniflare: '4.20260730.0' } as const;
const DIR = process.env.CLIENT_RUNTIMES_DIR ?? join(homedir(), '.cache/json-utility-service/client-runtimes');
const ALL_CHECKS = ['every operation, body and path forms', 'ProblemError', 'batching', 'timeouts and signal', 'gzip bodies'];

/** The checks with the package's built module, as one ES module, around `entry` (which has `client` and `checks`). */
async function bundled(entry: string): Promise<string> {
  const contents = `import * as client from './packages/client/dist/index.js';\nimport { checks } from './test/client-runtimes/checks.ts';\n${entry}`;
  const result = await build({ stdin: { contents, resolveDir: root, loader: 'js' }, bundle: true, format: 'esm', platform: 'neutral', write: false });
  return result.outputFiles[0]?.text ?? '';
}

// Node.js, Deno and Bun: `<runtime> checks.mjs <service URL>`.
const COMMAND_LINE = `const args = globalThis.Deno?.args ?? process.argv.slice(2);
try {
  console.log(JSON.stringify(await checks(client, args[0], true)));
} catch (error) {
  console.error(error?.stack ?? String(error));
  (globalThis.Deno ?? process).exit(1);
}`;

let app: FastifyInstance;
let base: string;
let script: string;
before(async () => {
  app = await buildApp({}, { logger: false });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  const dir = mkdtempSync(join(tmpdir(), 'json-utility-client-checks-'));
  script = join(dir, 'checks.mjs');
  writeFileSync(script, await bundled(COMMAND_LINE));
});
after(async () => {
  await app.close();
  rmSync(join(script, '..'), { recursive: true, force: true });
});

let installing: Promise<void> | undefined;
/** Deno, Bun and miniflare at their pinned versions, installed at the first call. */
function installed(): Promise<void> {
  installing ??= (async () => {
    const manifest = join(DIR, 'package.json');
    const wanted = Object.entries(RUNTIMES).map(([name, version]) => `${name}@${version}`);
    const have = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> }).dependencies : undefined;
    if (Object.entries(RUNTIMES).every(([name, version]) => have?.[name] === version)) return;
    mkdirSync(DIR, { recursive: true });
    await run('npm', ['install', '--prefix', DIR, '--no-audit', '--no-fund', '--save-exact', ...wanted], { maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: Error & { stderr?: string }) =>
        assert.fail(`Deno, Bun and miniflare cannot be installed here from the npm registry:\n${error.stderr ?? error.message}`),
    );
  })();
  return installing;
}

/** What this test uses of miniflare, which is loaded from CLIENT_RUNTIMES_DIR, not the project's dependencies. */
type MiniflareClass = new (options: { modules: boolean; script: string; compatibilityDate: string; bindings?: Record<string, string> }) => {
  dispatchFetch(url: string, init?: { method: string; body: string }): Promise<{ status: number; text(): Promise<string> }>;
  dispose(): Promise<void>;
};

/** miniflare's class, once Deno, Bun and miniflare are installed. */
async function miniflare(): Promise<MiniflareClass> {
  await installed();
  return ((await import(join(DIR, 'node_modules/miniflare/dist/src/index.js'))) as { Miniflare: MiniflareClass }).Miniflare;
}

/** What a runtime printed for the checks, or a failure naming the runtime and what it said. */
async function checksIn(runtime: string, command: string, args: string[]): Promise<string[]> {
  const { stdout } = await run(command, args, { cwd: root, timeout: 60_000 }).catch((error: { stdout?: string; stderr?: string; message: string }) =>
    assert.fail(`${runtime}: ${error.stderr || error.stdout || error.message}`),
  );
  return JSON.parse(stdout) as string[];
}

const streamed = [...ALL_CHECKS, 'the stream, its body streamed'];

test(`Node.js ${process.version}`, async () => {
  assert.deepEqual(await checksIn('Node.js', process.execPath, [script, base]), streamed);
});

test(`Deno ${RUNTIMES.deno}`, async () => {
  await installed();
  const deno = join(DIR, 'node_modules/.bin/deno');
  assert.deepEqual(await checksIn('Deno', deno, ['run', '--allow-net', script, base]), streamed);
});

test(`Bun ${RUNTIMES.bun}`, async () => {
  await installed();
  assert.deepEqual(await checksIn('Bun', join(DIR, 'node_modules/.bin/bun'), [script, base]), streamed);
});

test(`workerd, through miniflare ${RUNTIMES.miniflare}`, async (t) => {
  const Miniflare = await miniflare();
  const worker = await bundled(`export default {
  async fetch(request) {
    try {
      return Response.json(await checks(client, new URL(request.url).searchParams.get('base'), true));
    } catch (error) {
      return new Response(String(error?.stack ?? error), { status: 500 });
    }
  },
};`);
  const runtime = new Miniflare({ modules: true, script: worker, compatibilityDate: '2026-07-01' });
  t.after(() => runtime.dispose());
  const response = await runtime.dispatchFetch(`http://worker/?base=${encodeURIComponent(base)}`);
  const text = await response.text();
  assert.equal(response.status, 200, `workerd: ${text}`);
  assert.deepEqual(JSON.parse(text), streamed);
});

test('Chromium, a page on another origin', async (t) => {
  // The page and the client's files come from a server of their own: another port is another origin.
  const files: Record<string, [string, string]> = {
    '/': ['text/html', '<!doctype html><title>client</title>'],
    '/checks.js': ['text/javascript', await bundled('export const run = (base) => checks(client, base, false);')],
  };
  const pages = createServer((request, response) => {
    const file = files[request.url ?? ''];
    response.writeHead(file === undefined ? 404 : 200, { 'content-type': file?.[0] ?? 'text/plain' }).end(file?.[1] ?? '');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  t.after(() => pages.close());
  const origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  // Chromium streams a request body only over HTTP/2 (and HTTPS); the service speaks HTTP/1.1, so
  // the stream's lines go as one body there, and its answers are still read as they arrive.
  const passed = await page.evaluate(async (service) => {
    // A path on the page's origin, which the page's own import resolves, not the test's.
    const onPage = '/checks.js';
    const { run: checks } = (await import(onPage)) as { run: (base: string) => Promise<string[]> };
    return checks(service);
  }, base);
  assert.deepEqual(passed, [...ALL_CHECKS, 'the stream, its body sent whole (this runtime streams a request body only over HTTP/2)']);
  // A GET operation's answer may be kept (docs/operations.md, "Caches and CDNs"): asked twice from
  // the page, the second comes from Chromium's HTTP cache, and the service is asked once.
  const before = await pathRequests('/api/isOdd/:number');
  const answers = await page.evaluate(async (url) => {
    const first: unknown = await (await fetch(url)).json();
    return [first, await (await fetch(url)).json()];
  }, `${base}/api/isOdd/123456789`);
  assert.deepEqual(answers, [{ ret: true }, { ret: true }]);
  assert.equal((await pathRequests('/api/isOdd/:number')) - before, 1, 'the second answer came from the HTTP cache');
});

/** How many GETs of `route` the service has answered 200. */
async function pathRequests(route: string): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`http_requests_total{method="GET",route="${route}",status="200"}`));
  return Number(line?.split(' ')[1] ?? 0);
}

/** The README's "From code" blocks, in order, each as an ES module importing the package's built module. */
async function readmeBlocks(): Promise<string[]> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### From code'), readme.indexOf('## Architecture'));
  const blocks = [...section.matchAll(/```ts\n([^]*?)```/g)].map((match) => match[1] as string);
  assert.equal(blocks.length, 2, 'two blocks in "From code"');
  return Promise.all(
    blocks.map(async (contents) => {
      const result = await build({
        stdin: { contents, resolveDir: root, loader: 'ts' },
        bundle: true,
        format: 'esm',
        platform: 'neutral',
        write: false,
        alias: { 'json-utility-client': join(root, 'packages/client/dist/index.js') },
      });
      return result.outputFiles[0]?.text ?? '';
    }),
  );
}

test("README's From code, for Node.js, Deno, Bun and browsers: prints what its comments show", async () => {
  const [calls = ''] = await readmeBlocks();
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const shown = [
    ...readme
      .slice(readme.indexOf('### From code'))
      .split('## Architecture')[0]!
      .matchAll(/console\.log\(.*\/\/ (.*)$/gm),
  ].map((m) => m[1]);
  assert.equal(shown.length, 3);
  const file = join(script, '..', 'readme-from-code.mjs');
  writeFileSync(file, calls.replaceAll('http://127.0.0.1:3000', base));
  const { stdout } = await run(process.execPath, [file], { timeout: 30_000 });
  assert.equal(stdout, shown.map((line) => `${line}\n`).join(''));
});

test(`README's Worker, in workerd: 80 requests at once, each answered, each one batch`, async (t) => {
  const Miniflare = await miniflare();
  const [, worker = ''] = await readmeBlocks();
  const runtime = new Miniflare({ modules: true, script: worker, compatibilityDate: '2026-07-01', bindings: { JSON_UTILITY_URL: base } });
  t.after(() => runtime.dispose());
  const batchesBefore = await batchRequests();
  const inputs = Array.from({ length: 80 }, (_, i) => Array.from({ length: i + 1 }, (_, j) => (j * 7919 + i) % 101));
  const answers = await Promise.all(
    inputs.map(async (input) => {
      const response = await runtime.dispatchFetch('http://worker/', { method: 'POST', body: JSON.stringify(input) });
      return { status: response.status, body: await response.text() };
    }),
  );
  answers.forEach((answer, i) => {
    const input = inputs[i] as number[];
    assert.equal(answer.status, 200, `request ${i}: ${answer.body}`);
    assert.deepEqual(JSON.parse(answer.body), { sorted: [...input].sort((a, b) => a - b), evenLength: input.length % 2 === 0 }, `request ${i}`);
  });
  // Each request's two calls went as one batch of its own.
  assert.equal((await batchRequests()) - batchesBefore, inputs.length);
});

/** How many POST /api/batch the service has answered. */
async function batchRequests(): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^http_requests_total\{method="POST",route="\/api\/batch",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}
