import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { isEven, isNumber, isOdd, sort, stringSplit, toString, type JsonValue } from '../../src/core/index.js';
import { buildApp } from '../../src/app.js';
import { conformanceTo, type Conformance } from './openapi-conformance.js';

/**
 * Random requests over a real socket: random JSON in every field, broken JSON, wrong media types,
 * random methods and odd paths. Whatever comes in, the answer is never a 5xx, every error is
 * problem+json, and no prototype of the server's process changes.
 */

interface Answer {
  status: number;
  type: string | undefined;
  headers: Readonly<Record<string, unknown>>;
  body: string;
}

let base: URL;
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What the pure core says a valid request must get: the service must answer exactly this. */
function coreAnswer(path: string, body: Record<string, unknown>): unknown {
  const input = body.input as JsonValue;
  switch (path) {
    case '/api/sort':
      return { sortedArray: sort(input as JsonValue[], { order: body.order as 'asc' | 'desc' | undefined, locale: body.locale as string | undefined }) };
    case '/api/isNumber':
      return { ret: isNumber(input) };
    case '/api/toString':
      return { ret: toString(input) };
    case '/api/stringSplit': {
      const { string, seperator, separator } = input as Record<string, string>;
      return { ret: stringSplit(string as string, seperator ?? separator) };
    }
    case '/api/isEven':
    case '/api/isOdd':
      // JSON.parse rounds a long number; parity reads its text, so only exact ones are compared.
      if (typeof input === 'number' && !Number.isSafeInteger(input)) return undefined;
      return { ret: (path === '/api/isEven' ? isEven : isOdd)(input as string | number) };
    default:
      return undefined;
  }
}

/** Requests that once went wrong (in fuzzing or elsewhere), replayed through the same checks on every run. */
const REGRESSIONS = JSON.parse(readFileSync(new URL('fuzz-regressions.json', import.meta.url), 'utf8')) as Array<{
  method: string;
  path: string;
  contentType?: string;
  body?: string;
  note: string;
}>;

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
  fc.tuple(jsonText, jsonText, jsonText).map(([input, order, locale]) => `{"input":${input},"order":${order},"locale":${locale}}`),
  fc
    .tuple(
      fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 6 }),
      fc.constantFrom('"asc"', '"desc"', 'null'),
      fc.constantFrom('"en"', '"sv"', '"not a tag"', '""', '1'),
    )
    .map(([input, order, locale]) => `{"input":${JSON.stringify(input)},"order":${order},"locale":${locale}}`),
  jsonText,
  jsonText.map((text) => text.slice(0, Math.max(0, text.length - 1))), // truncated
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.nat({ max: 100_000 }).map((depth) => `{"input":${'['.repeat(depth)}${']'.repeat(depth)}}`),
  fc.nat({ max: 200_000 }).map((length) => `{"input":"${'x'.repeat(length)}"}`),
);
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  undefined,
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PROPFIND');
const oddPath = fc.oneof(
  fc.constantFrom(...PATHS),
  fc
    .tuple(
      fc.constantFrom(...GET_PATHS),
      fc.oneof(
        fc.constantFrom(...SPECIAL_NUMBERS),
        fc.string({ maxLength: 30 }).map(encodeURIComponent),
        fc.constantFrom('%', '%ZZ', '%C0%80', '..%2F..', '%00', 'a'.repeat(40_000)),
      ),
    )
    .map(([p, v]) => p + v),
  fc.webPath(),
  fc.constantFrom('/api/', '/api', '//api//isEven', '/API/sort', '/api/sort?x=%', '/api/isEven//3', '/%E2%82'),
);

describe('HTTP fuzzing over a real socket', () => {
  let app: FastifyInstance;
  let document: Conformance;
  // Statuses of the answers checked against the OpenAPI document, by how often they came.
  const checkedStatuses = new Map<number, number>();
  before(async () => {
    app = await buildApp({}, { logger: false });
    base = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
    document = await conformanceTo(app);
  });
  after(() => app.close());

  async function check(verb: string, path: string, type: string | undefined, payload: string): Promise<void> {
    const hasBody = verb !== 'GET' && verb !== 'HEAD';
    const answer = await send(verb, path, type === undefined ? {} : { 'content-type': type }, hasBody ? payload : undefined);
    assert.ok(answer.status < 500, `${verb} ${path} ${type}: ${answer.status} ${answer.body.slice(0, 200)}`);
    if (answer.status >= 400 && verb !== 'HEAD') {
      assert.equal(answer.type, 'application/problem+json; charset=utf-8', `${verb} ${path}: ${answer.status}`);
      const problem = JSON.parse(answer.body) as { status: number; title: string; detail: string };
      assert.equal(problem.status, answer.status);
      assert.ok(problem.title.length > 0 && problem.detail.length > 0);
    }
    if (answer.status === 200 && verb === 'POST' && type?.startsWith('application/json; charset=utf-8') !== false) {
      const expected = coreAnswer(path, JSON.parse(payload) as Record<string, unknown>);
      if (expected !== undefined) assert.deepEqual(JSON.parse(answer.body), JSON.parse(JSON.stringify(expected)), `${path} ${payload.slice(0, 200)}`);
    }
    if (document.check(verb, path, { status: answer.status, contentType: answer.type, headers: answer.headers, body: answer.body })) {
      checkedStatuses.set(answer.status, (checkedStatuses.get(answer.status) ?? 0) + 1);
    }
    assert.equal(Object.getOwnPropertyNames(Object.prototype).includes('polluted'), false);
    assert.deepEqual(Object.keys(Object.prototype), []);
    assert.deepEqual(Object.keys(Array.prototype), []);
  }
  const property = fc.asyncProperty(method, oddPath, contentType, body, check);

  for (const { method: verb, path, contentType: type, body: payload, note } of REGRESSIONS) {
    test(`regression: ${note}`, () => check(verb, path, type, payload ?? ''));
  }

  test('no 5xx, every error is problem+json with a matching status, valid inputs get the core answer, every answer is what the OpenAPI document says, no prototype is polluted', async (t) => {
    // A failure prints the counterexample: add it to fuzz-regressions.json with a note.
    await fc.assert(property, { numRuns: 1500 });
    assert.equal((await send('GET', '/healthz', {})).status, 200);
    t.diagnostic(`checked against the OpenAPI document, by status: ${JSON.stringify(Object.fromEntries([...checkedStatuses].sort()))}`);
    assert.ok([...checkedStatuses.values()].reduce((sum, count) => sum + count, 0) >= 50, 'too few answers matched an operation');
  });
});
