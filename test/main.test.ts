import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';

const ENTRY = new URL('../src/main.ts', import.meta.url).pathname;

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return { child, output: () => stdout, errors: () => stderr };
}

test('the entry listens where PORT and HOST say, prints the docs URL, serves, and exits 0 on SIGTERM', async () => {
  const server = start({ PORT: '0', HOST: '127.0.0.1' });
  while (!/API docs: (\S+)/.test(server.output())) {
    assert.equal(server.child.exitCode, null, server.errors());
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const docs = /API docs: (\S+)/.exec(server.output())?.[1] as string;
  assert.match(docs, /^http:\/\/127\.0\.0\.1:\d+\/api\/docs$/);
  const base = docs.replace('/api/docs', '');
  const answer = await fetch(`${base}/api/isOdd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":9007199254740993}' });
  assert.deepEqual(await answer.json(), { ret: true });
  assert.equal((await fetch(docs)).status, 200);
  server.child.kill('SIGTERM');
  const [code] = await once(server.child, 'exit');
  assert.equal(code, 0);
});

test('a bad variable stops the start with a message naming it', async () => {
  const server = start({ PORT: 'eighty' });
  const [code] = await once(server.child, 'exit');
  assert.equal(code, 2);
  assert.match(server.errors(), /PORT="eighty" is invalid: it accepts an integer from 0 to 65535/);
});
