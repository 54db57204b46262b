import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/server.js';

/**
 * Random requests over a real socket: random JSON in every field, broken JSON, wrong media types,
 * random methods and odd paths. Whatever comes in, the answer is never a 5xx, every error is
 * problem+json, and no prototype of the server's process changes.
 */

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}

let base: URL;
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const PATHS = ['/api/sort', '/api/isEven', '/api/isOdd', '/api/isNumber', '/api/toString', '/api/stringSplit', '/sort', '/is-odd', '/is-even', '/toString'];
const GET_PATHS = ['/api/isEven/', '/api/isOdd/', '/api/isNumber/'];
const SPECIAL_NUMBERS = ['-0', '1e400', '-1e400', '1e-400', '9007199254740993', '1'.repeat(10_000), '1'.repeat(10_001), '0.1e1', '4.0'];
const SPECIAL_KEYS = ['__proto__', 'constructor', 'prototype', 'input', 'array', 'number', 'string', 'seperator', 'separator', 'order', 'locale'];

const key = fc.oneof(fc.constantFrom(...SPECIAL_KEYS), fc.string({ maxLength: 8 }));
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...SPECIAL_NUMBERS, 'null', 'true', 'false', '""', '"0x1F"', '" 12 "', '"\\ud800"', '"Infinity"'),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;
const body = fc.oneof(
  jsonText.map((input) => `{"input":${input}}`),
  fc.tuple(fc.constantFrom('input', 'array', 'number'), jsonText).map(([field, value]) => `{"${field}":${value}}`),
  jsonText.map((value) => `{"input":{"string":${value},"seperator":${value}}}`),
  jsonText,
  jsonText.map((text) => text.slice(0, Math.max(0, text.length - 1))), // truncated
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.nat({ max: 100_000 }).map((depth) => `{"input":${'['.repeat(depth)}${']'.repeat(depth)}}`),
  fc.nat({ max: 200_000 }).map((length) => `{"input":"${'x'.repeat(length)}"}`),
);
const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', undefined);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PROPFIND');
const oddPath = fc.oneof(
  fc.constantFrom(...PATHS),
  fc.tuple(fc.constantFrom(...GET_PATHS), fc.oneof(fc.constantFrom(...SPECIAL_NUMBERS), fc.string({ maxLength: 30 }).map(encodeURIComponent), fc.constantFrom('%', '%ZZ', '%C0%80', '..%2F..', '%00', 'a'.repeat(40_000)))).map(([p, v]) => p + v),
  fc.webPath(),
  fc.constantFrom('/api/', '/api', '//api//isEven', '/API/sort', '/api/sort?x=%', '/api/isEven//3', '/%E2%82'),
);

describe('HTTP fuzzing over a real socket', () => {
  let app: FastifyInstance;
  before(async () => {
    app = await buildApp({}, { logger: false });
    base = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  });
  after(() => app.close());

  test('no 5xx, every error is problem+json with a matching status, and no prototype is polluted', async () => {
    await fc.assert(
      fc.asyncProperty(method, oddPath, contentType, body, async (verb, path, type, payload) => {
        const hasBody = verb !== 'GET' && verb !== 'HEAD';
        const answer = await send(verb, path, type === undefined ? {} : { 'content-type': type }, hasBody ? payload : undefined);
        assert.ok(answer.status < 500, `${verb} ${path} ${type}: ${answer.status} ${answer.body.slice(0, 200)}`);
        if (answer.status >= 400 && verb !== 'HEAD') {
          assert.equal(answer.type, 'application/problem+json; charset=utf-8', `${verb} ${path}: ${answer.status}`);
          const problem = JSON.parse(answer.body) as { status: number; title: string; detail: string };
          assert.equal(problem.status, answer.status);
          assert.ok(problem.title.length > 0 && problem.detail.length > 0);
        }
        assert.equal(Object.getOwnPropertyNames(Object.prototype).includes('polluted'), false);
        assert.deepEqual(Object.keys(Object.prototype), []);
        assert.deepEqual(Object.keys(Array.prototype), []);
      }),
      { numRuns: 1500 },
    );
    assert.equal((await send('GET', '/healthz', {})).status, 200);
  });
});
