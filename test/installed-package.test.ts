import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// The package as a user receives it: docs/usage.md's install lines, run as written (`npm pack`, then a
// global install of the tarball, into a fresh prefix), then used as a command and as a library.

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'installed-package-'));
const prefix = join(work, 'prefix');
const bin = join(prefix, 'bin', 'json-utility');
const installed = join(prefix, 'lib', 'node_modules', 'json-utility-service');

async function cli(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdin.end(stdin);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** `json-utility serve --port 0` from the installed package, asked once, then sent SIGTERM. */
async function serveAndAsk(env: Record<string, string>): Promise<{ exited: Promise<unknown[]>; output: () => string }> {
  const child = spawn(bin, ['serve', '--port', '0'], {
    env: { ...process.env, DRAIN_DELAY_MS: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  try {
    const deadline = Date.now() + 20_000;
    while (!/listening on (http:\/\/[^\s"]+)/.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    const base = /listening on (http:\/\/[^\s"]+)/.exec(output)?.[1] as string;
    assert.ok(base, output);
    assert.deepEqual(await (await fetch(`${base}/api/isEven/4`)).json(), { ret: true });
  } finally {
    child.kill('SIGTERM');
  }
  return { exited, output: () => output };
}

describe('the packed package, installed as a user would', { timeout: 240_000 }, () => {
  let versionLine = '';
  before(async () => {
    const readme = readFileSync(join(root, 'docs/usage.md'), 'utf8');
    const block = /^## Install\n[^]*?```sh\n([^]*?)```/m.exec(readme)?.[1] ?? '';
    const lines = block
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter(Boolean);
    assert.deepEqual(
      lines.map((line) => line.split(' ').slice(0, 2).join(' ')),
      ['npm pack', 'npm install', 'json-utility --version'],
    );
    // Only npm's own settings change, from the environment: the global prefix, and its cache first.
    const env = {
      ...process.env,
      npm_config_prefix: prefix,
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      PATH: `${join(prefix, 'bin')}:${process.env.PATH}`,
    };
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const tarball = join(root, `json-utility-service-${version}.tgz`);
    try {
      for (const line of lines) {
        const { stdout } = await run('sh', ['-c', line], { cwd: root, env, maxBuffer: 16 << 20 });
        versionLine = stdout;
      }
    } finally {
      rmSync(tarball, { force: true });
    }
    assert.ok(existsSync(bin), 'the global install put json-utility in the prefix');
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  test("docs/usage.md's install lines, as written, install the package and its command", () => {
    assert.equal(versionLine, '1.0.0\n');
    assert.ok(readdirSync(installed).includes('LICENSE'), 'the licence ships in the package');
  });

  test('the json-utility command: an operation, a negative number, standard input', async () => {
    assert.deepEqual(await cli(['isOdd', '-7']), { code: 0, stdout: '{"ret":true}\n', stderr: '' });
    assert.deepEqual(await cli(['sort'], '[3,1,2]'), { code: 0, stdout: '{"sortedArray":[1,2,3]}\n', stderr: '' });
    assert.deepEqual(await cli(['isEven'], '9007199254740993\n'), { code: 0, stdout: '{"ret":false}\n', stderr: '' });
  });

  test('an error exits 1 with the problem on stderr; --help exits 0', async () => {
    assert.deepEqual(await cli(['isEven', '2.5']), { code: 1, stdout: '', stderr: 'isEven: the argument must be an integer\n' });
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^json-utility 1\.0\.0: /);
  });

  test('json-utility serve --port 0 answers a request and stops on SIGTERM', async () => {
    const { exited } = await serveAndAsk({});
    assert.deepEqual(await exited, [0, null]);
  });

  // protobufjs's install script is denied (package.json's allowScripts; docs/development.md): the
  // OTLP exporter's default encoding, protobuf, must still work from the installed package.
  test('tracing from the installed package: spans reach an OTLP/HTTP receiver in protobuf', async () => {
    const bodies: Array<{ type: string | undefined; bytes: number }> = [];
    const collector = createServer((request, response) => {
      let bytes = 0;
      request.on('data', (chunk: Buffer) => (bytes += chunk.length));
      request.on('end', () => {
        if (request.url === '/v1/traces') bodies.push({ type: request.headers['content-type'], bytes });
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const { exited, output } = await serveAndAsk({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '600000' });
    // The spans are flushed at shutdown.
    assert.deepEqual(await exited, [0, null], output());
    collector.close();
    assert.equal(bodies.length, 1, output());
    assert.equal(bodies[0]?.type, 'application/x-protobuf');
    assert.ok((bodies[0]?.bytes ?? 0) > 50);
  });

  test('an ESM project imports the library, /app and the client package, and typechecks against the installed types', async () => {
    const project = join(work, 'project');
    mkdirSync(join(project, 'node_modules', '@types'), { recursive: true });
    symlinkSync(installed, join(project, 'node_modules', 'json-utility-service'));
    // The client is installed alone, from its own tarball (README, "From code").
    const { stdout: packed } = await run('npm', ['pack', join(root, 'packages/client'), '--pack-destination', work, '--json']);
    const tarball = join(work, (JSON.parse(packed) as Array<{ filename: string }>)[0]?.filename ?? '');
    mkdirSync(join(project, 'node_modules', 'json-utility-client'));
    await run('tar', ['-xzf', tarball, '-C', join(project, 'node_modules', 'json-utility-client'), '--strip-components=1']);
    // A TypeScript user has Node's types; the server's types (Fastify's) refer to them.
    symlinkSync(join(root, 'node_modules', '@types', 'node'), join(project, 'node_modules', '@types', 'node'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
    const source = `import { isOdd, sort, toString, type JsonValue } from 'json-utility-service';
import { createClient, ProblemError } from 'json-utility-client';
import { buildApp } from 'json-utility-service/app';

const values: JsonValue[] = [3, 'b', null];
const app = await buildApp({ bodyLimit: 1024 }, { logger: false, prefix: '/tools/json' });
const answer = await app.inject({ method: 'GET', url: '/tools/json/isEven/4' });
await app.close();
const client = createClient({ baseUrl: 'http://127.0.0.1:1' });
const ok: boolean = isOdd('-7') && typeof client.isEven === 'function' && ProblemError.prototype instanceof Error;
console.log(JSON.stringify([ok, sort(values), toString({ b: 1, a: 2 }), answer.statusCode, answer.body]));
`;
    writeFileSync(join(project, 'check.ts'), source);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['check.ts'],
      }),
    );
    await run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', project], { cwd: project });
    // The same program as JavaScript, run by Node from the project.
    writeFileSync(
      join(project, 'check.mjs'),
      source.replace(', type JsonValue', '').replace('const values: JsonValue[]', 'const values').replace('const ok: boolean', 'const ok'),
    );
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: project });
    assert.deepEqual(JSON.parse(stdout), [true, [null, 3, 'b'], '{"a":2,"b":1}', 200, '{"ret":true}']);
  });
});

describe("the client package from a fresh clone, as its README's install lines say", { timeout: 240_000 }, () => {
  test('npm ci, then npm pack ./packages/client builds it; installed in a project outside, it answers', async (t) => {
    // A folder of its own: the suite above removes `work` when it ends.
    const own = mkdtempSync(join(tmpdir(), 'client-from-clone-'));
    t.after(() => rmSync(own, { recursive: true, force: true }));
    const clone = join(own, 'clone');
    const project = join(own, 'client-project');
    // A fresh clone's files: those git tracks, as they are in this work tree; no dist/, no node_modules.
    const { stdout: tracked } = await run('git', ['ls-files', '-z'], { cwd: root, maxBuffer: 16 << 20 });
    mkdirSync(clone);
    await run('sh', ['-c', `git ls-files -z | xargs -0 tar -cf - | tar -xf - -C '${clone}'`], { cwd: root, maxBuffer: 16 << 20 });
    assert.ok(tracked.includes('packages/client/src/index.ts') && !existsSync(join(clone, 'packages/client/dist')));
    const readme = readFileSync(join(root, 'packages/client/README.md'), 'utf8');
    const block = /```sh\n([^]*?)```/.exec(readme)?.[1] ?? '';
    const [inClone = '', inProject = ''] = block.split(/^# in your project.*$/m);
    const commands = (text: string) =>
      text
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, '').trim())
        .filter((line) => line !== '' && !line.startsWith('#'));
    assert.deepEqual(commands(inClone), ['npm ci', 'npm pack ./packages/client']);
    assert.deepEqual(commands(inProject), ['npm install ./json-utility-client-1.0.0.tgz']);
    const env = { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false' };
    for (const line of commands(inClone)) await run('sh', ['-c', line], { cwd: clone, env, maxBuffer: 64 << 20 });
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'caller', private: true, type: 'module' }));
    writeFileSync(join(project, 'json-utility-client-1.0.0.tgz'), readFileSync(join(clone, 'json-utility-client-1.0.0.tgz')));
    for (const line of commands(inProject)) await run('sh', ['-c', line], { cwd: project, env, maxBuffer: 64 << 20 });
    // The service, and a caller in the project that uses the installed package.
    const { buildApp } = await import('../src/app.js');
    const app = await buildApp({}, { logger: false });
    t.after(() => app.close());
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    writeFileSync(
      join(project, 'call.mjs'),
      "import { createClient } from 'json-utility-client';\n" +
        'const client = createClient({ baseUrl: process.argv[2] });\n' +
        "console.log(JSON.stringify([await client.isEven({ input: 4 }), await client.batch([{ operation: 'sort', input: [2, 1] }])]));\n",
    );
    const { stdout } = await run(process.execPath, ['call.mjs', base], { cwd: project });
    assert.deepEqual(JSON.parse(stdout), [{ ret: true }, [{ status: 200, result: { sortedArray: [1, 2] } }]]);
  });
});
