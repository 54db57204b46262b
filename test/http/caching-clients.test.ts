import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { build } from './helper.js';

// docs/operations.md, "Caches and CDNs": a GET operation's 200 carries a strong ETag, and a
// request naming it gets 304 with no body; here as real clients on the wire see it.
const run = promisify(execFile);
const FOREVER = 'public, max-age=31536000, immutable';

async function listening(t: TestContext): Promise<string> {
  const app = await build(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/isOdd/9`;
}

test('curl: the 200 with its ETag, then 304 with no body for If-None-Match', async (t) => {
  const url = await listening(t);
  const full = (await run('curl', ['-sS', '-i', url])).stdout;
  assert.match(full, /^HTTP\/1\.1 200 /);
  assert.match(full, new RegExp(`^cache-control: ${FOREVER}\r$`, 'im'));
  const tag = /^etag: ("[^"]+")\r$/im.exec(full)?.[1];
  assert.ok(tag !== undefined, full);
  const again = (await run('curl', ['-sS', '-i', '-H', `If-None-Match: ${tag}`, url])).stdout;
  assert.match(again, /^HTTP\/1\.1 304 /);
  assert.match(again, new RegExp(`^etag: ${tag}\r$`, 'im'));
  assert.equal(again.split('\r\n\r\n')[1], '');
});

test("Python's urllib: the 200 with its ETag, then 304 (urllib raises it as an HTTPError) with no body", async (t) => {
  const url = await listening(t);
  const script = `
import sys, urllib.request, urllib.error
with urllib.request.urlopen(sys.argv[1]) as response:
    tag = response.headers["ETag"]
    print(response.status, response.headers["Cache-Control"], response.read().decode())
try:
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={"If-None-Match": tag}))
except urllib.error.HTTPError as error:
    print(error.code, error.headers["ETag"] == tag, repr(error.read()))
`;
  const lines = (await run('python3', ['-c', script, url])).stdout.trim().split('\n');
  assert.deepEqual(lines, [`200 ${FOREVER} {"ret":true}`, "304 True b''"]);
});

test("Node's http and fetch: the 200 with its ETag, then 304 with no body", async (t) => {
  const url = await listening(t);
  const full = await fetch(url);
  assert.equal(full.status, 200);
  assert.equal(full.headers.get('cache-control'), FOREVER);
  const tag = full.headers.get('etag') ?? '';
  assert.equal(await full.text(), '{"ret":true}');
  const conditional = await fetch(url, { headers: { 'if-none-match': tag } });
  assert.deepEqual([conditional.status, conditional.headers.get('etag'), await conditional.text()], [304, tag, '']);
  const [status, etag, body] = await new Promise<[number, string | undefined, string]>((resolve, reject) => {
    request(url, { headers: { 'if-none-match': tag } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve([response.statusCode ?? 0, response.headers.etag, text]));
    })
      .on('error', reject)
      .end();
  });
  assert.deepEqual([status, etag, body], [304, tag, '']);
});
