import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from './process.js';

test('the entry listens where PORT and HOST say, prints the docs URL, serves, and exits 0 on SIGTERM', async () => {
  const server = await startServer({ DRAIN_DELAY_MS: '0' });
  assert.match(server.output(), /^JSON utility service listening on http:\/\/127\.0\.0\.1:\d+\nAPI docs: http:\/\/127\.0\.0\.1:\d+\/api\/docs\n$/);
  const answer = await fetch(`${server.base}/api/isOdd`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"input":9007199254740993}' });
  assert.deepEqual(await answer.json(), { ret: true });
  assert.equal((await fetch(`${server.base}/api/docs`)).status, 200);
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0);
});

test('a bad variable stops the start with a message naming it', async () => {
  await assert.rejects(startServer({ PORT: 'eighty' }), /PORT="eighty" is invalid: it accepts an integer from 0 to 65535/);
});
