import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CURRENT_OPERATION_IDS, OPERATIONS, servedAt, type Operation } from '../../src/operations/index.js';
import { JSON_TYPE, assertOk, assertProblem, build, post, sharedApp } from './helper.js';

const CURRENT = CURRENT_OPERATION_IDS.map((id) => OPERATIONS[id] as Operation);
const POST_ONLY = CURRENT.map((operation) => servedAt(operation));
const GET_ONLY = CURRENT.filter((operation) => operation.byPath !== undefined).map((operation) => `${servedAt(operation)}/4`);

describe('methods (RFC 9110 §15.5.6, docs/behaviour.md §1)', () => {
  const shared = sharedApp();
  for (const url of POST_ONLY) {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
      test(`${method} ${url} is 405 with Allow: OPTIONS, POST`, async () => {
        const app = await shared();
        const response = await app.inject({ method, url });
        assert.equal(response.headers.allow, 'OPTIONS, POST');
        assertProblem(response, 405, `${method} is not allowed on ${url}; it accepts OPTIONS, POST`);
      });
    }
  }
  for (const url of GET_ONLY) {
    const template = url.replace(/\/4$/, '/{number}');
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      test(`${method} ${url} is 405 with Allow: GET, HEAD, OPTIONS`, async () => {
        const app = await shared();
        const response = await app.inject({ method, url, headers: { 'content-type': 'text/plain' }, payload: 'not even read' });
        assert.equal(response.headers.allow, 'GET, HEAD, OPTIONS');
        assertProblem(response, 405, `${method} is not allowed on ${template}; it accepts GET, HEAD, OPTIONS`);
      });
    }
  }

  test('HEAD on a POST-only path is 405 with no body', async () => {
    const app = await shared();
    const response = await app.inject({ method: 'HEAD', url: '/api/sort' });
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers.allow, 'OPTIONS, POST');
    assert.equal(response.body, '');
  });

  test('a method Fastify does not route by default (PROPFIND) is 405 too', async () => {
    const app = await shared();
    const response = await app.inject({ method: 'PROPFIND' as 'GET', url: '/api/sort' });
    assert.equal(response.statusCode, 405);
    assert.equal(response.headers.allow, 'OPTIONS, POST');
  });

  for (const url of GET_ONLY) {
    test(`HEAD ${url} answers as GET does, without a body`, async () => {
      const app = await shared();
      const get = await app.inject({ method: 'GET', url });
      const head = await app.inject({ method: 'HEAD', url });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-type'], JSON_TYPE);
      assert.equal(head.headers['content-length'], get.headers['content-length']);
      assert.equal(head.body, '');
    });
  }

  test('OPTIONS answers 204 with Allow', async () => {
    const app = await shared();
    const response = await app.inject({ method: 'OPTIONS', url: '/api/isEven/4' });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers.allow, 'GET, HEAD, OPTIONS');
    assert.equal(response.body, '');
  });

  test('OPTIONS answers a CORS preflight', async () => {
    const app = await shared();
    const response = await app.inject({
      method: 'OPTIONS',
      url: '/api/sort',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers['access-control-allow-origin'], '*');
    assert.equal(response.headers['access-control-allow-methods'], 'OPTIONS, POST');
    assert.equal(response.headers['access-control-allow-headers'], 'content-type');
    assert.equal(response.headers['access-control-max-age'], '600');
    // The headers allowed are those asked for, so a cache must key the answer on them too.
    assert.equal(response.headers.vary, 'Access-Control-Request-Headers');
    assert.equal(response.headers.allow, 'OPTIONS, POST');
    const byPath = await app.inject({
      method: 'OPTIONS',
      url: '/api/isOdd/7',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
    });
    assert.equal(byPath.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
  });

  test('a preflight for a path that does not exist is the 404 problem, not an empty answer', async () => {
    const app = await shared();
    const response = await app.inject({
      method: 'OPTIONS',
      url: '/api/nothing',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST' },
    });
    assert.equal(response.statusCode, 404);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    assert.equal(response.headers['access-control-allow-methods'], undefined);
  });

  test('a preflight from an origin not listed gets no CORS header, and the answer still varies by Origin', async (t) => {
    const app = await build(t, { corsOrigins: ['https://good.example'] });
    const response = await app.inject({
      method: 'OPTIONS',
      url: '/api/sort',
      headers: { origin: 'https://bad.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(response.statusCode, 204);
    assert.equal(response.headers['access-control-allow-origin'], undefined);
    assert.match(String(response.headers.vary), /^Origin\b/);
  });

  test('CORS limited to listed origins echoes an allowed origin and omits others', async (t) => {
    const app = await build(t, { corsOrigins: ['https://good.example'] });
    const good = await post(app, '/api/isEven', { input: 2 }, { origin: 'https://good.example' });
    assert.equal(good.headers['access-control-allow-origin'], 'https://good.example');
    assert.equal(good.headers.vary, 'Origin');
    const bad = await post(app, '/api/isEven', { input: 2 }, { origin: 'https://bad.example' });
    assert.equal(bad.headers['access-control-allow-origin'], undefined);
    assert.equal(bad.statusCode, 200);
  });

  test('CORS off sends no CORS header', async (t) => {
    const app = await build(t, { corsOrigins: 'off' });
    const response = await post(app, '/api/isEven', { input: 2 }, { origin: 'https://example.org' });
    assert.equal(response.headers['access-control-allow-origin'], undefined);
  });
});

describe('paths', () => {
  const shared = sharedApp();
  test('an unknown path is 404 problem+json', async () => {
    const app = await shared();
    assertProblem(await app.inject({ method: 'GET', url: '/api/nope' }), 404, 'There is no GET /api/nope; the operations are listed at /api/docs');
  });
  test('paths are case-sensitive: /api/iseven/4 is 404', async () => {
    const app = await shared();
    assertProblem(await app.inject({ method: 'GET', url: '/api/iseven/4' }), 404, 'There is no GET /api/iseven/4; the operations are listed at /api/docs');
  });
  test('the current contract lives under /api only: GET /isEven/4 is 404', async () => {
    const app = await shared();
    assert.equal((await app.inject({ method: 'GET', url: '/isEven/4' })).statusCode, 404);
  });
  test('one trailing slash is tolerated on POST and GET', async () => {
    const app = await shared();
    assertOk(await post(app, '/api/isEven/', { input: 3 }), { ret: false });
    assertOk(await app.inject({ method: 'GET', url: '/api/isOdd/3/' }), { ret: true });
  });
  test('a query string is ignored', async () => {
    const app = await shared();
    assertOk(await app.inject({ method: 'GET', url: '/api/isOdd/3?input=4' }), { ret: true });
  });
  test('a malformed percent-encoding is 400', async () => {
    const app = await shared();
    assertProblem(
      await app.inject({ method: 'GET', url: '/api/isNumber/%ZZ' }),
      400,
      'The request path is not a valid URL: it has a malformed percent-encoding',
    );
  });
});

describe('request bodies (docs/behaviour.md §1)', () => {
  const shared = sharedApp();
  const MEDIA_TYPES_ACCEPTED = ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON; Charset="utf-8"'];
  for (const type of MEDIA_TYPES_ACCEPTED) {
    test(`Content-Type: ${type} is accepted`, async () => {
      const app = await shared();
      assertOk(await post(app, '/api/isOdd', { input: 3 }, { 'content-type': type }), { ret: true });
    });
  }
  const MEDIA_TYPES_REFUSED = [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/problem+json',
    'application/jsonx',
    'text/json',
    'multipart/form-data; boundary=x',
  ];
  for (const type of MEDIA_TYPES_REFUSED) {
    test(`Content-Type: ${type} is 415`, async () => {
      const app = await shared();
      assertProblem(
        await post(app, '/api/isOdd', { input: 3 }, { 'content-type': type }),
        415,
        'The request body must be JSON, sent with Content-Type: application/json (charset utf-8, if given)',
      );
    });
  }
  test('a charset other than UTF-8 is 415', async () => {
    const app = await shared();
    assertProblem(
      await post(app, '/api/isOdd', { input: 3 }, { 'content-type': 'application/json; charset=latin1' }),
      415,
      'The request body must be UTF-8 JSON; charset latin1 is not accepted',
    );
  });
  test('a body without Content-Type is 415', async () => {
    const app = await shared();
    const response = await app.inject({ method: 'POST', url: '/api/isOdd', payload: '{"input":3}' });
    assertProblem(response, 415, 'The request body must be JSON, sent with Content-Type: application/json (charset utf-8, if given)');
  });

  const BODIES: Array<[string, string | undefined, string | RegExp, string[] | undefined]> = [
    ['no body at all', undefined, 'The request body must be a JSON object with an "input" field', ['']],
    ['an empty body', '', 'The request body is empty; it must be a JSON object with an "input" field', ['']],
    ['malformed JSON', '{"input":', 'The request body is not valid JSON: Unexpected end of JSON input', undefined],
    ['a trailing comma', '{"input":1,}', /^The request body is not valid JSON: /, undefined],
    ['an array body', '[3]', 'The request body must be a JSON object with an "input" field', ['']],
    ['a string body', '"3"', 'The request body must be a JSON object with an "input" field', ['']],
    ['a null body', 'null', 'The request body must be a JSON object with an "input" field', ['']],
    ['an object without input', '{"inputs":3}', '/input is required; the body has "inputs", which is not one of its fields', ['/input']],
    ['a misspelt field and more', '{"inpt":3,"x":1}', '/input is required; the body has "inpt", "x", which are not among its fields', ['/input']],
  ];
  for (const [name, body, detail, pointers] of BODIES) {
    test(`${name} is 400`, async () => {
      const app = await shared();
      const response = await app.inject({
        method: 'POST',
        url: '/api/isOdd',
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, payload: body }),
      });
      assertProblem(response, 400, detail, pointers);
    });
  }

  test('no type coercion: "4" stays a string for sort, true stays a boolean for parity', async () => {
    const app = await shared();
    assertOk(await post(app, '/api/sort', { input: ['10', '9', 1] }), { sortedArray: [1, '10', '9'] });
    assertProblem(await post(app, '/api/isEven', { input: true }), 400, /^\/input must be a number/, ['/input']);
    assertProblem(await post(app, '/api/sort', { input: [1], order: ['asc'] }), 400, '/order must be "asc" or "desc"', ['/order']);
    assertProblem(await post(app, '/api/stringSplit', { input: { string: 12 } }), 400, '/input/string must be a string', ['/input/string']);
  });

  test('unknown fields are ignored', async () => {
    const app = await shared();
    assertOk(await post(app, '/api/isOdd', { input: 3, note: 'x', nested: { deep: [1] } }), { ret: true });
  });

  test('__proto__ and constructor are ordinary keys and pollute nothing', async () => {
    const app = await shared();
    const body = '{"input":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}},"__proto__":{"polluted":true}}';
    assertOk(await post(app, '/api/toString', body), { ret: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}' });
    assertOk(await post(app, '/api/isNumber', body), { ret: false });
    const sorted = await post(app, '/api/sort', '{"input":[{"__proto__":{"a":1}},{"__proto__":null}]}');
    assert.equal(sorted.body, '{"sortedArray":[{"__proto__":null},{"__proto__":{"a":1}}]}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  });
});

describe('responses', () => {
  const shared = sharedApp();
  test('success is 200 application/json; charset=utf-8 with exactly the contract body', async () => {
    const app = await shared();
    const response = await post(app, '/api/isEven', { input: 2 });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    assert.equal(response.body, '{"ret":true}');
    assert.equal(response.headers['content-length'], '12');
  });
});

describe('encoding', () => {
  const shared = sharedApp();
  test('a body that is not valid UTF-8 is 400, not silently repaired', async () => {
    const app = await shared();
    const payload = Buffer.concat([Buffer.from('{"input":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const response = await app.inject({ method: 'POST', url: '/api/toString', headers: { 'content-type': 'application/json' }, payload });
    assertProblem(response, 400, 'The request body is not valid UTF-8');
  });
  test('UTF-8 text, astral characters included, arrives whole', async () => {
    const app = await shared();
    assertOk(await post(app, '/api/toString', '{"input":["é","😀","\\u00e9"]}'), { ret: '["é","😀","é"]' });
  });
  test('a leading byte order mark is ignored (RFC 8259 §8.1 allows it)', async () => {
    const app = await shared();
    assertOk(await post(app, '/api/isOdd', '\ufeff{"input":3}'), { ret: true });
  });
});
