import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { describe, test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../src/config.js';
import { decodedBody, REQUEST_CODINGS, requestCoding, type RequestCoding } from '../../src/http/protocol/content-coding.js';
import { ANSWER_CODINGS, encoderBytesOf } from '../../src/http/protocol/answer-coding.js';
import { ProblemError } from '../../src/operations/problem.js';
import { assertOk, assertProblem, build, post, sharedApp } from './helper.js';

const run = promisify(execFile);
const HAS_ZSTD = typeof zlib.zstdCompressSync === 'function';
const ENCODE: Readonly<Record<string, (bytes: Buffer) => Buffer>> = {
  gzip: (bytes) => zlib.gzipSync(bytes),
  deflate: (bytes) => zlib.deflateSync(bytes),
  br: (bytes) => zlib.brotliCompressSync(bytes),
  ...(HAS_ZSTD ? { zstd: (bytes: Buffer) => zlib.zstdCompressSync(bytes) } : {}),
};
const DECODE: Readonly<Record<string, (bytes: Buffer) => Buffer>> = {
  gzip: (bytes) => zlib.gunzipSync(bytes),
  deflate: (bytes) => zlib.inflateSync(bytes),
  br: (bytes) => zlib.brotliDecompressSync(bytes),
  ...(HAS_ZSTD ? { zstd: (bytes: Buffer) => zlib.zstdDecompressSync(bytes) } : {}),
};
const CODINGS = Object.keys(ENCODE);
const ACCEPTED = CODINGS.join(', ');

const numbers = (count: number) => Array.from({ length: count }, (_, i) => (i * 7919) % 10_007);
const sortBody = (count: number) => Buffer.from(JSON.stringify({ input: numbers(count) }));
const sorted = (count: number) => ({ sortedArray: numbers(count).sort((a, b) => a - b) });

async function listening(t: TestContext, overrides: Partial<Config> = {}): Promise<{ app: FastifyInstance; port: number; url: string }> {
  const app = await build(t, overrides);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  return { app, port, url: `http://127.0.0.1:${port}` };
}

/** One request over a real socket, the answer's bytes as they came (Node's http does not decode). */
function call(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, method, path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

describe('coded request bodies (docs/behaviour.md §1, Content-Encoding)', () => {
  const app = sharedApp();
  test('the codings read are gzip, deflate, br, and zstd where Node.js has it', () => {
    assert.deepEqual(REQUEST_CODINGS, CODINGS);
    assert.deepEqual(ANSWER_CODINGS.toSorted(), CODINGS.toSorted());
  });

  for (const coding of [...CODINGS, 'x-gzip', 'GZIP', ' Br ']) {
    const encode = ENCODE[coding.trim().toLowerCase().replace('x-gzip', 'gzip')] as (bytes: Buffer) => Buffer;
    test(`${JSON.stringify(coding)}: a sort, a batch and a single call answer as the same body uncoded`, async () => {
      assertOk(await post(await app(), '/api/sort', encode(sortBody(1000)), { 'content-encoding': coding }), sorted(1000));
      assertOk(await post(await app(), '/api/isEven', encode(Buffer.from('{"input":"12"}')), { 'content-encoding': coding }), { ret: true });
      const batch = {
        operations: [
          { operation: 'isOdd', input: '7' },
          { operation: 'sort', input: [2, 1] },
        ],
      };
      assertOk(await post(await app(), '/api/batch', encode(Buffer.from(JSON.stringify(batch))), { 'content-encoding': coding }), {
        answers: [
          { status: 200, result: { ret: true } },
          { status: 200, result: { sortedArray: [1, 2] } },
        ],
      });
    });
  }

  test('identity is no coding at all', async () => {
    assertOk(await post(await app(), '/api/isEven', '{"input":"12"}', { 'content-encoding': 'identity' }), { ret: true });
  });

  test('a coding it does not read is 415 with Accept-Encoding naming those it does (RFC 9110 §15.5.16, §12.5.3)', async () => {
    const response = await post(await app(), '/api/sort', '{"input":[1]}', { 'content-encoding': 'x-unknown' });
    assertProblem(
      response,
      415,
      `The request body's Content-Encoding x-unknown is not one this service reads; send it as it is, or coded with one of: ${ACCEPTED}`,
    );
    assert.equal(response.headers['accept-encoding'], ACCEPTED);
    const several = await post(await app(), '/api/sort', zlib.brotliCompressSync(zlib.gzipSync('{"input":[1]}')), { 'content-encoding': 'gzip, br' });
    assertProblem(several, 415, `The request body has several codings (Content-Encoding: gzip, br); this service reads one at a time, one of: ${ACCEPTED}`);
    assert.equal(several.headers['accept-encoding'], ACCEPTED);
  });

  // Node.js 22's zstd decoder ends a cut frame without an error (24 and later report it): the body is then what came, JSON cut short.
  const cutZstdReported = (() => {
    try {
      zlib.zstdDecompressSync(zlib.zstdCompressSync(sortBody(10)).subarray(0, 8));
      return false;
    } catch {
      return true;
    }
  })();
  for (const coding of CODINGS) {
    test(`a corrupt or cut ${coding} body is 400 naming its coding`, async () => {
      const whole = (ENCODE[coding] as (bytes: Buffer) => Buffer)(sortBody(100));
      const namingCoding = new RegExp(`^The request body is not valid ${coding} \\(Content-Encoding: ${coding}\\): .+`);
      assertProblem(await post(await app(), '/api/sort', Buffer.from('this is not coded'), { 'content-encoding': coding }), 400, namingCoding);
      const cut = await post(await app(), '/api/sort', whole.subarray(0, whole.length - 8), { 'content-encoding': coding });
      if (coding === 'zstd' && !cutZstdReported) assert.equal(cut.statusCode, 400, cut.body);
      else assertProblem(cut, 400, namingCoding);
    });
  }

  describe('BODY_LIMIT applies to the decoded bytes', () => {
    const body = (length: number) => Buffer.from(`{"input":"${'x'.repeat(length - 12)}"}`);
    for (const coding of CODINGS) {
      test(`${coding}: a body that decodes to exactly the limit passes; one byte more is 413`, async (t) => {
        const limited = await build(t, { bodyLimit: 100_000 });
        const encode = ENCODE[coding] as (bytes: Buffer) => Buffer;
        assertOk(await post(limited, '/api/isNumber', encode(body(100_000)), { 'content-encoding': coding }), { ret: false });
        assertProblem(
          await post(limited, '/api/isNumber', encode(body(100_001)), { 'content-encoding': coding }),
          413,
          `The request body, decoded from ${coding}, is larger than the limit of 100000 bytes (BODY_LIMIT); it was not decoded further`,
        );
      });
    }
  });

  test('a bomb (64 KiB of gzip that inflates to 64 MiB) stops inflating at the limit: the decoder is destroyed having read a fraction', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    assert.ok(bomb.length < 128 * 1024, `the bomb is ${bomb.length} bytes`);
    let decoder: zlib.Gunzip | undefined;
    const watched: RequestCoding = { name: 'gzip', decoderBytes: 0, decoder: () => (decoder = zlib.createGunzip()) };
    // Sent in pieces, as a socket gives it.
    const pieces = Array.from({ length: Math.ceil(bomb.length / 4096) }, (_, i) => bomb.subarray(i * 4096, (i + 1) * 4096));
    const body = decodedBody(Readable.from(pieces), watched, 1024 * 1024);
    let decoded = 0;
    const failure = await new Promise<unknown>((resolve) => {
      body.on('data', (chunk: Buffer) => (decoded += chunk.length));
      body.on('error', resolve);
      body.on('end', () => resolve(undefined));
    });
    assert.ok(failure instanceof ProblemError && failure.status === 413, String(failure));
    assert.ok(decoded <= 1024 * 1024, `${decoded} bytes handed on`);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(decoder?.destroyed, true);
    assert.ok((decoder?.bytesWritten ?? Infinity) < bomb.length / 4, `the decoder read ${decoder?.bytesWritten} of ${bomb.length} bytes`);
  });

  test('the bomb over a real socket: 413 in one piece, the connection closed after it', async (t) => {
    const { port } = await listening(t, { bodyLimit: 1024 * 1024 });
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    const answer = await call(port, 'POST', '/api/sort', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb);
    assert.equal(answer.status, 413);
    assert.equal(answer.headers.connection, 'close');
    assert.match(answer.body.toString(), /decoded from gzip, is larger than the limit of 1048576 bytes \(BODY_LIMIT\)/);
  });

  test('a coded body counts in the memory budget as a body of BODY_LIMIT, with its decoder', () => {
    assert.equal(requestCoding('gzip')?.decoderBytes, 384 * 1024);
    assert.equal(requestCoding('br')?.decoderBytes, 16 * 1024 * 1024 + 256 * 1024);
    assert.throws(() => requestCoding('x-unknown'), ProblemError);
    assert.equal(requestCoding(undefined), undefined);
    assert.equal(requestCoding(' identity '), undefined);
  });

  describe('the stream', () => {
    for (const coding of CODINGS) {
      test(`a ${coding} stream: its lines are answered as those of a plain one`, async (t) => {
        const { port } = await listening(t);
        const lines = '{"operation":"isEven","input":"4"}\n{"operation":"isOdd","input":"4"}\n{"operation":"sort","input":[3,1]}\n';
        const answer = await call(
          port,
          'POST',
          '/api/stream',
          { 'content-type': 'application/x-ndjson', 'content-encoding': coding },
          (ENCODE[coding] as (b: Buffer) => Buffer)(Buffer.from(lines)),
        );
        assert.equal(answer.status, 200);
        assert.equal(
          answer.body.toString(),
          '{"status":200,"result":{"ret":true}}\n{"status":200,"result":{"ret":false}}\n{"status":200,"result":{"sortedArray":[1,3]}}\n',
        );
      });
    }
    test('a gzip stream that turns corrupt: the lines before are answered, then a 400 problem line naming gzip ends it', async (t) => {
      const { port } = await listening(t);
      const gzip = zlib.createGzip({ flush: zlib.constants.Z_SYNC_FLUSH });
      const sending = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/stream',
        headers: { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
      });
      gzip.on('data', (chunk: Buffer) => sending.write(chunk));
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        sending.on('response', resolve).on('error', reject);
        gzip.write('{"operation":"isEven","input":"4"}\n');
      });
      const lines = createInterface({ input: response, crlfDelay: Infinity })[Symbol.asyncIterator]();
      assert.deepEqual(JSON.parse((await lines.next()).value as string), { status: 200, result: { ret: true } });
      sending.end(Buffer.from('garbage that is not deflate at all'));
      const last = JSON.parse((await lines.next()).value as string) as { status: number; problem?: { detail: string } };
      assert.equal(last.status, 400);
      assert.match(last.problem?.detail ?? '', /^The request body is not valid gzip \(Content-Encoding: gzip\): /);
      assert.equal((await lines.next()).done, true);
    });
  });
});

describe('coded answers (Accept-Encoding)', () => {
  for (const coding of CODINGS) {
    test(`${coding}: a large answer is sent coded, with Vary, and decodes to the answer`, async (t) => {
      const { port } = await listening(t);
      const answer = await call(port, 'POST', '/api/sort', { 'content-type': 'application/json', 'accept-encoding': coding }, sortBody(20_000));
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-encoding'], coding);
      assert.equal(answer.headers.vary, 'accept-encoding');
      assert.deepEqual(JSON.parse((DECODE[coding] as (bytes: Buffer) => Buffer)(answer.body).toString()), sorted(20_000));
      assert.ok(answer.body.length < JSON.stringify(sorted(20_000)).length / 3, `${answer.body.length} bytes on the wire`);
    });
  }

  test('q-values choose the coding; q=0 refuses one; none asked, or none known, is the answer as it is (RFC 9110 §12.5.3)', async (t) => {
    const { port } = await listening(t);
    const codingFor = async (accept: string | undefined) =>
      (
        await call(
          port,
          'POST',
          '/api/sort',
          { 'content-type': 'application/json', ...(accept === undefined ? {} : { 'accept-encoding': accept }) },
          sortBody(2000),
        )
      ).headers['content-encoding'];
    assert.equal(await codingFor('gzip;q=0.5, br;q=0.9'), 'br');
    assert.equal(await codingFor('br;q=0.1, gzip'), 'gzip');
    assert.equal(await codingFor('deflate, gzip;q=0'), 'deflate');
    assert.equal(await codingFor('gzip;q=0'), undefined);
    assert.equal(await codingFor('identity'), undefined);
    assert.equal(await codingFor('x-foo'), undefined);
    assert.equal(await codingFor(undefined), undefined);
  });

  test('an answer under COMPRESS_MIN_BYTES is sent as it is, with Vary; one at it is coded', async (t) => {
    const { port } = await listening(t, { compressMinBytes: 40 });
    const small = await call(port, 'POST', '/api/sort', { 'content-type': 'application/json', 'accept-encoding': 'gzip' }, Buffer.from('{"input":[2,1]}'));
    assert.equal(small.body.toString(), '{"sortedArray":[1,2]}');
    assert.equal(small.headers['content-encoding'], undefined);
    assert.equal(small.headers.vary, 'accept-encoding');
    // {"sortedArray":[1,2,3,4,5,6,7,8,9,10,11]} is 40 bytes.
    const edge = await call(
      port,
      'POST',
      '/api/sort',
      { 'content-type': 'application/json', 'accept-encoding': 'gzip' },
      Buffer.from('{"input":[11,10,9,8,7,6,5,4,3,2,1]}'),
    );
    assert.equal(edge.headers['content-encoding'], 'gzip');
    assert.equal(zlib.gunzipSync(edge.body).toString(), '{"sortedArray":[1,2,3,4,5,6,7,8,9,10,11]}');
  });

  test('answers that are always small (isEven, isOdd, isNumber, the probes) are never coded and carry no Vary', async (t) => {
    const { port } = await listening(t, { compressMinBytes: 0 });
    for (const [method, path, body] of [
      ['GET', '/api/isEven/4'],
      ['POST', '/api/isOdd', '{"input":"3"}'],
      ['POST', '/api/isNumber', '{"input":"3"}'],
      ['GET', '/healthz'],
      ['GET', '/readyz'],
    ] as const) {
      const answer = await call(
        port,
        method,
        path,
        { 'accept-encoding': 'gzip', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body === undefined ? undefined : Buffer.from(body),
      );
      assert.equal(answer.status, 200, path);
      assert.equal(answer.headers['content-encoding'], undefined, path);
      assert.equal(answer.headers.vary, undefined, path);
    }
  });

  test('COMPRESS_MIN_BYTES=off codes nothing and adds no Vary; coded bodies are still read', async (t) => {
    const { port } = await listening(t, { compressMinBytes: 'off' });
    const answer = await call(
      port,
      'POST',
      '/api/sort',
      { 'content-type': 'application/json', 'accept-encoding': 'gzip', 'content-encoding': 'gzip' },
      zlib.gzipSync(sortBody(2000)),
    );
    assert.equal(answer.headers['content-encoding'], undefined);
    assert.equal(answer.headers.vary, undefined);
    assert.deepEqual(JSON.parse(answer.body.toString()), sorted(2000));
  });

  test('CORS with a list of origins: Vary names both Origin and Accept-Encoding', async (t) => {
    const { port } = await listening(t, { corsOrigins: ['https://app.example'] });
    const answer = await call(
      port,
      'POST',
      '/api/sort',
      { 'content-type': 'application/json', 'accept-encoding': 'gzip', origin: 'https://app.example' },
      sortBody(2000),
    );
    assert.equal(answer.headers.vary, 'Origin, accept-encoding');
  });

  for (const coding of ['gzip', 'br', 'deflate']) {
    test(`the stream's answers in ${coding}: each answer is flushed, read before the next line is sent`, async (t) => {
      const { port } = await listening(t);
      const sending = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/stream',
        headers: { 'content-type': 'application/x-ndjson', 'accept-encoding': coding },
      });
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        sending.on('response', resolve).on('error', reject);
        sending.write('{"operation":"isEven","input":"4"}\n');
      });
      assert.equal(response.headers['content-encoding'], coding);
      assert.equal(response.headers.vary, 'accept-encoding');
      const decoder = coding === 'gzip' ? zlib.createGunzip() : coding === 'br' ? zlib.createBrotliDecompress() : zlib.createInflate();
      const lines = createInterface({ input: response.pipe(decoder), crlfDelay: Infinity })[Symbol.asyncIterator]();
      assert.deepEqual(JSON.parse((await lines.next()).value as string), { status: 200, result: { ret: true } });
      sending.write('{"operation":"isOdd","input":"4"}\n');
      assert.deepEqual(JSON.parse((await lines.next()).value as string), { status: 200, result: { ret: false } });
      sending.end();
      assert.equal((await lines.next()).done, true);
    });
  }

  test('a large answer is compressed off the event loop: a probe is answered while it is', async (t) => {
    const { port } = await listening(t);
    const big = sortBody(400_000);
    const answered: string[] = [];
    const large = call(port, 'POST', '/api/sort', { 'content-type': 'application/json', 'accept-encoding': 'br' }, big).then((answer) => {
      answered.push('sort');
      return answer;
    });
    // Probes while the sort is answered and compressed (the sort itself runs in a worker thread).
    const probes = (async () => {
      while (answered.length === 0) {
        await call(port, 'GET', '/healthz', {});
        answered.push('probe');
      }
    })();
    const answer = await large;
    await probes;
    assert.equal(answer.headers['content-encoding'], 'br');
    assert.ok(answered.indexOf('probe') < answered.indexOf('sort'), answered.join(' '));
  });

  test('the budget counts the encoder of the coding a request would get', () => {
    assert.equal(encoderBytesOf('gzip'), 384 * 1024);
    assert.equal(encoderBytesOf('br;q=0.5, gzip;q=0.4'), 8 * 1024 * 1024);
    assert.equal(encoderBytesOf('identity'), 0);
    assert.equal(encoderBytesOf('x-foo'), 0);
  });
});

describe('real clients', () => {
  test('curl --compressed reads a coded answer; curl sends a gzip body from a file', async (t) => {
    const { url } = await listening(t);
    const { stdout, stderr } = await run(
      'curl',
      ['-sS', '--compressed', '-v', '-H', 'content-type: application/json', '--data-binary', sortBody(5000).toString(), `${url}/api/sort`],
      { maxBuffer: 1 << 24 },
    );
    assert.deepEqual(JSON.parse(stdout), sorted(5000));
    assert.match(stderr, /< content-encoding: (zstd|br|gzip|deflate)/i);
    const { stdout: fromGzip } = await run('bash', [
      '-c',
      `printf '%s' '{"input":[3,1,2]}' | gzip | curl -sS -H 'content-type: application/json' -H 'content-encoding: gzip' --data-binary @- ${url}/api/sort`,
    ]);
    assert.equal(fromGzip, '{"sortedArray":[1,2,3]}');
  });

  test("Python's urllib sends a gzip body and reads a gzip answer", async (t) => {
    const { url } = await listening(t);
    const script = `
import gzip, json, sys, urllib.request
body = gzip.compress(json.dumps({"input": list(range(5000, 0, -1))}).encode())
request = urllib.request.Request(sys.argv[1] + "/api/sort", data=body, method="POST",
    headers={"Content-Type": "application/json", "Content-Encoding": "gzip", "Accept-Encoding": "gzip"})
with urllib.request.urlopen(request) as response:
    print(response.headers["Content-Encoding"], json.loads(gzip.decompress(response.read()))["sortedArray"][:3])
`;
    const { stdout } = await run('python3', ['-c', script, url]);
    assert.equal(stdout.trim(), 'gzip [1, 2, 3]');
  });

  test("Node's fetch asks for gzip and deflate by itself and reads the coded answer", async (t) => {
    const { url } = await listening(t);
    const response = await fetch(`${url}/api/sort`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sortBody(5000) });
    assert.match(response.headers.get('content-encoding') ?? '', /^(gzip|deflate|br|zstd)$/);
    assert.deepEqual(await response.json(), sorted(5000));
  });
});
