import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';

// Issue: an answer sent before the body has been read (a 413 from Content-Length, or once a
// chunked body passes BODY_LIMIT) must reach clients that upload the whole body before they
// read: the service reads and discards the rest (lingering close, RFC 9112 §9.6).

const run = promisify(execFile);
const BODY_LIMIT = 16 * 1024 * 1024;
const OVER = 17 * 1024 * 1024;
const TIMES = 10;
const DETAIL = `The request body is larger than the limit of ${BODY_LIMIT} bytes (BODY_LIMIT)`;

let app: FastifyInstance;
let url: string;
const body = Buffer.from(`{"input":"${'x'.repeat(OVER - 12)}"}`);
const folder = mkdtempSync(join(tmpdir(), 'early-answers-'));
const bodyFile = join(folder, 'body.json');

before(async () => {
  writeFileSync(bodyFile, body);
  app = await buildApp({}, { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/isNumber`;
});
after(async () => {
  await app.close();
  rmSync(folder, { recursive: true, force: true });
});

function assertTooLarge(status: number, text: string, client: string): void {
  assert.equal(status, 413, `${client}: ${text.slice(0, 200)}`);
  const problem = JSON.parse(text) as { status: number; detail: string };
  assert.equal(problem.status, 413);
  assert.equal(problem.detail, DETAIL);
}

const PYTHON = `
import sys, urllib.request, urllib.error
url, size, times, chunked = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == 'chunked'
body = b'{"input":"' + b'x' * (size - 12) + b'"}'
def chunks():
    for i in range(0, len(body), 65536):
        yield body[i:i + 65536]
for _ in range(times):
    request = urllib.request.Request(url, data=chunks() if chunked else body, headers={'Content-Type': 'application/json'}, method='POST')
    try:
        with urllib.request.urlopen(request) as response:
            print(response.status, response.read().decode())
    except urllib.error.HTTPError as error:
        print(error.code, error.read().decode())
    except Exception as error:
        print(0, repr(error))
`;

function nodeHttp(chunked: boolean): Promise<[number, string]> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = body.length;
    const req = request(url, { method: 'POST', headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve([response.statusCode ?? 0, text]));
    });
    req.on('error', (error) => resolve([0, String(error)]));
    if (chunked) {
      for (let at = 0; at < body.length; at += 1 << 20) req.write(body.subarray(at, at + (1 << 20)));
      req.end();
    } else {
      req.end(body);
    }
  });
}

async function viaFetch(chunked: boolean): Promise<[number, string]> {
  try {
    const stream = new ReadableStream({
      start(controller) {
        for (let at = 0; at < body.length; at += 1 << 20) controller.enqueue(body.subarray(at, at + (1 << 20)));
        controller.close();
      },
    });
    const init = chunked ? { body: stream, duplex: 'half' } : { body };
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, ...init } as RequestInit);
    return [response.status, await response.text()];
  } catch (error) {
    return [0, String((error as Error & { cause?: unknown }).cause ?? error)];
  }
}

describe('an answer sent before the body is read reaches every client (lingering close)', () => {
  for (const mode of ['Content-Length', 'chunked'] as const) {
    const chunked = mode === 'chunked';
    test(`Python urllib.request, ${mode}, 17 MiB: 413 problem ${TIMES} times out of ${TIMES}`, async () => {
      const { stdout } = await run('python3', ['-c', PYTHON, url, String(OVER), String(TIMES), mode], { maxBuffer: 1 << 20 });
      const lines = stdout.trim().split('\n');
      assert.equal(lines.length, TIMES);
      for (const line of lines) {
        const space = line.indexOf(' ');
        assertTooLarge(Number(line.slice(0, space)), line.slice(space + 1), 'urllib');
      }
    });
    test(`Node http.request writing the whole body, ${mode}, 17 MiB: 413 problem ${TIMES} times out of ${TIMES}`, async () => {
      for (let i = 0; i < TIMES; i++) assertTooLarge(...(await nodeHttp(chunked)), 'http.request');
    });
    test(`fetch, ${mode}, 17 MiB: 413 problem ${TIMES} times out of ${TIMES}`, async () => {
      for (let i = 0; i < TIMES; i++) assertTooLarge(...(await viaFetch(chunked)), 'fetch');
    });
    test(`curl, ${mode}, 17 MiB: 413 problem ${TIMES} times out of ${TIMES}`, async () => {
      const headers = chunked ? ['-H', 'Transfer-Encoding: chunked'] : [];
      for (let i = 0; i < TIMES; i++) {
        const { stdout } = await run(
          'curl',
          ['-sS', '-w', '\n%{http_code}', '-H', 'content-type: application/json', ...headers, '--data-binary', `@${bodyFile}`, url],
          { maxBuffer: 1 << 20 },
        ).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stderr ?? ''}\n0` }));
        const [text = '', status = '0'] = [stdout.slice(0, stdout.lastIndexOf('\n')), stdout.slice(stdout.lastIndexOf('\n') + 1)];
        assertTooLarge(Number(status), text, 'curl');
      }
    });
  }

  test('Expect: 100-continue with a Content-Length over the limit: 413 comes instead of 100 Continue', async () => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    socket.write(`POST /api/isNumber HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${OVER}\r\nExpect: 100-continue\r\n\r\n`);
    const answer = await new Promise<string>((resolve) => {
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
        if (received.includes('}')) resolve(received);
      });
      socket.on('error', () => resolve(received));
    }).finally(() => socket.destroy());
    assert.match(answer, /^HTTP\/1\.1 413 Content Too Large\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
  });

  test('Expect: 100-continue within the limits: 100 Continue, then the answer', async () => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    const json = '{"input":"12"}';
    socket.write(`POST /api/isNumber HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nExpect: 100-continue\r\n\r\n`);
    const received = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        if (text.startsWith('HTTP/1.1 100 Continue\r\n\r\n') && !text.includes('"ret"')) socket.write(json);
        if (text.includes('}')) resolve(text);
      });
    }).finally(() => socket.destroy());
    assert.match(received, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    assert.match(received, /\{"ret":true\}$/);
  });

  test('a client that never sends the rest is closed after LINGER_MS', async (t) => {
    const lingering = await buildApp({ bodyLimit: 1000, lingerMs: 300 }, { logger: false });
    t.after(() => lingering.close());
    await lingering.listen({ port: 0, host: '127.0.0.1' });
    const socket = connect((lingering.server.address() as { port: number }).port, '127.0.0.1');
    socket.write('POST /api/isNumber HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"input":');
    const started = Date.now();
    const received = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.on('close', () => resolve(text));
      socket.on('error', () => undefined);
    });
    const waited = Date.now() - started;
    assert.match(received, /^HTTP\/1\.1 413 /);
    assert.ok(waited >= 250 && waited < 2000, `closed after ${waited} ms`);
  });

  test('the service still answers afterwards', async () => {
    const response = await fetch(url.replace('/api/isNumber', '/api/isEven/4'));
    assert.deepEqual(await response.json(), { ret: true });
  });
});
