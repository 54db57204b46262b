import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { LEGACY_ROUTES } from '../../src/http/operations/legacy-routes.js';
import { JSON_TYPE, assertProblem, build, post, sharedApp } from './helper.js';

const DEFAULT_DEPRECATION = '@1795305600'; // 2026-11-22T00:00:00Z
const linkTo = (successor: string) => `<${successor}>; rel="successor-version"`;

describe('the earlier revision (docs/behaviour.md §4)', () => {
  const shared = sharedApp();
  const OK: Array<[string, string, string]> = [
    ['/sort', '{"array":[3,1,2]}', '{"sortedArray":[1,2,3]}'],
    ['/sort', '{"array":["b",null,1,"a"]}', '{"sortedArray":[null,1,"a","b"]}'],
    ['/sort', '{"array":[]}', '{"sortedArray":[]}'],
    ['/is-odd', '{"number":7}', '{"number":7,"isOdd":true}'],
    ['/is-odd', '{"number":9007199254740993}', '{"number":9007199254740993,"isOdd":true}'],
    ['/is-odd', '{"number":123456789012345678901234567890}', '{"number":123456789012345678901234567890,"isOdd":false}'],
    ['/is-odd', '{"number":4.0}', '{"number":4.0,"isOdd":false}'],
    ['/is-odd', '{"number":1e400}', '{"number":1e400,"isOdd":false}'],
    ['/is-odd', '{"number":-0}', '{"number":-0,"isOdd":false}'],
    ['/is-odd', '{"number":"0x1F"}', '{"number":"0x1F","isOdd":true}'],
    ['/is-even', '{"number":12}', '{"number":12,"isEven":true}'],
    ['/is-even', '{"number":9007199254740993}', '{"number":9007199254740993,"isEven":false}'],
    ['/is-even', '{"number":" 8 "}', '{"number":" 8 ","isEven":true}'],
    ['/toString', '{"number":1e21}', '{"ret":"1e+21"}'],
    ['/toString', '{"number":{"b":[1.0],"a":"é"}}', '{"ret":"{\\"a\\":\\"é\\",\\"b\\":[1]}"}'],
    ['/toString', '{"number":"text"}', '{"ret":"text"}'],
  ];
  for (const [path, body, expected] of OK) {
    test(`POST ${path} ${body} → ${expected}`, async () => {
      const app = await shared();
      const response = await post(app, path, body);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], JSON_TYPE);
      assert.equal(response.body, expected);
    });
  }

  // The earlier revision's error list: 400 for a missing body, a sort input that is not an array,
  // or a number that is not a valid integer.
  const BAD: Array<[string, string | undefined, number, string, string[] | undefined]> = [
    ['/sort', undefined, 400, 'The request body must be a JSON object with an "array" field', ['']],
    ['/sort', '{"array":"1,2"}', 400, '/array must be an array of JSON values', ['/array']],
    ['/sort', '{"input":[1]}', 400, '/array is required; the body has "input", which is not one of its fields', ['/array']],
    ['/sort', '{"array":[1e400]}', 400, '/array/0 is a number beyond the range of a double', ['/array/0']],
    ['/is-odd', undefined, 400, 'The request body must be a JSON object with a "number" field', ['']],
    ['/is-odd', '{"number":2.5}', 400, '/number must be an integer', ['/number']],
    ['/is-odd', '{"number":"abc"}', 400, '/number must be a number, or a string in numeric notation such as "42", "-1e3" or "0x1F"', ['/number']],
    ['/is-even', '{"number":true}', 400, '/number must be a number, or a string in numeric notation such as "42", "-1e3" or "0x1F"', ['/number']],
    ['/is-even', '{"input":4}', 400, '/number is required; the body has "input", which is not one of its fields', ['/number']],
    [
      '/is-even',
      `{"number":${'1'.repeat(10_001)}}`,
      400,
      '/number is 10001 characters long; numbers are limited to 10000 characters (NUMBER_TEXT_LIMIT)',
      ['/number'],
    ],
    ['/toString', '{}', 400, '/number is required', ['/number']],
    ['/toString', '{"number":1e400}', 400, '/number is a number beyond the range of a double, which has no canonical form', ['/number']],
    ['/toString', '{"number":', 400, 'The request body is not valid JSON: Unexpected end of JSON input', undefined],
  ];
  for (const [path, body, status, detail, pointers] of BAD) {
    test(`POST ${path} ${body?.slice(0, 40) ?? '(no body)'} is ${status}`, async () => {
      const app = await shared();
      const response = body === undefined ? await app.inject({ method: 'POST', url: path }) : await post(app, path, body);
      assertProblem(response, status, detail, pointers);
    });
  }

  test('another media type is 415', async () => {
    const app = await shared();
    const response = await post(app, '/is-odd', 'number=3', { 'content-type': 'application/x-www-form-urlencoded' });
    assertProblem(response, 415, 'The request body must be JSON, sent with Content-Type: application/json (charset utf-8, if given)');
  });

  describe('deprecation headers on every legacy response, errors included', () => {
    for (const { path, successor } of LEGACY_ROUTES) {
      test(`POST ${path}: Deprecation, Link to ${successor}, no Sunset by default`, async () => {
        const app = await shared();
        for (const response of [
          await post(app, path, path === '/sort' ? { array: [1] } : { number: 1 }),
          await post(app, path, '{"broken"'),
          await app.inject({ method: 'GET', url: path }),
          await app.inject({ method: 'OPTIONS', url: path }),
        ]) {
          assert.equal(response.headers.deprecation, DEFAULT_DEPRECATION, `${response.statusCode}`);
          assert.equal(response.headers.link, linkTo(successor));
          assert.equal(response.headers.sunset, undefined);
        }
      });
    }

    test('configured dates: Deprecation in Unix seconds, Sunset as an HTTP-date', async (t) => {
      const app = await build(t, { legacyDeprecationDate: new Date('2026-01-01T00:00:00Z'), legacySunset: new Date('2027-06-30T12:30:00Z') });
      const response = await post(app, '/is-even', { number: 2 });
      assert.equal(response.headers.deprecation, '@1767225600');
      assert.equal(response.headers.sunset, 'Wed, 30 Jun 2027 12:30:00 GMT');
      assert.equal(response.headers.link, '</api/isEven>; rel="successor-version"');
    });

    test('the current routes carry none of these headers', async (t) => {
      const app = await build(t, { legacySunset: new Date('2027-06-30T12:30:00Z') });
      const response = await post(app, '/api/isEven', { input: 2 });
      assert.equal(response.headers.deprecation, undefined);
      assert.equal(response.headers.link, undefined);
      assert.equal(response.headers.sunset, undefined);
    });

    test('a browser can read them: CORS exposes them', async () => {
      const app = await shared();
      const response = await post(app, '/is-even', { number: 2 }, { origin: 'https://example.org' });
      assert.match(String(response.headers['access-control-expose-headers']), /deprecation, link, sunset/);
    });
  });

  test('LEGACY_ROUTES=off: every legacy path is 404, the current ones are served', async (t) => {
    const app = await build(t, { legacyRoutes: 'off' });
    for (const { path, successor } of LEGACY_ROUTES) {
      const response = await post(app, path, path === '/sort' ? { array: [1] } : { number: 1 });
      assertProblem(response, 404, `There is no POST ${path}; the operations are listed at /api/docs`);
      assert.equal(response.headers.deprecation, undefined);
      assert.equal((await post(app, successor, { input: path === '/sort' ? [1] : 1 })).statusCode, 200);
    }
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    for (const { path } of LEGACY_ROUTES) assert.equal(document.paths[path], undefined);
  });

  test('the OpenAPI document lists each legacy operation as deprecated, tagged legacy, with examples', async () => {
    const app = await shared();
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
      paths: Record<
        string,
        {
          post: {
            deprecated?: boolean;
            tags: string[];
            requestBody: { content: Record<string, { examples: object }> };
            responses: Record<string, { headers?: object }>;
          };
        }
      >;
    }>();
    for (const { path, successor } of LEGACY_ROUTES) {
      const operation = document.paths[path]?.post;
      assert.ok(operation, path);
      assert.equal(operation.deprecated, true);
      assert.deepEqual(operation.tags, ['legacy']);
      assert.ok(Object.keys(operation.requestBody.content['application/json']?.examples ?? {}).length >= 2);
      // On every answer, problems included.
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = Object.keys(response.headers ?? {});
        for (const name of ['Deprecation', 'Link', 'Sunset']) assert.ok(headers.includes(name), `${path} ${status}: ${name}`);
      }
      assert.equal(document.paths[successor]?.post.deprecated, undefined, `${successor} is current`);
    }
  });

  test('property: the earlier and the current revision give the same answers', async () => {
    const app = await shared();
    const integerText = fc.oneof(fc.bigInt().map(String), fc.integer(), fc.constantFrom('0x1F', '1e3', '2.5', 'abc', '9007199254740993'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), integerText, async (array, value, number) => {
        const oldSort = await post(app, '/sort', { array });
        const newSort = await post(app, '/api/sort', { input: array });
        assert.equal(oldSort.body, newSort.body);
        const oldString = await post(app, '/toString', { number: value });
        const newString = await post(app, '/api/toString', { input: value });
        assert.equal(oldString.body, newString.body);
        for (const [path, successor, field] of [
          ['/is-odd', '/api/isOdd', 'isOdd'],
          ['/is-even', '/api/isEven', 'isEven'],
        ] as const) {
          const raw = typeof number === 'string' && /^-?\d+$/.test(number) ? `{"number":${number}}` : JSON.stringify({ number });
          const old = await post(app, path, raw);
          const current = await post(app, successor, raw.replace('"number"', '"input"'));
          assert.equal(old.statusCode, current.statusCode);
          if (old.statusCode === 200) {
            const echoed = raw.slice('{"number":'.length, -1);
            assert.equal(old.body, `{"number":${echoed},"${field}":${current.json<{ ret: boolean }>().ret}}`);
          } else {
            const detail = current.json<{ detail: string }>().detail.replace('/input', '/number');
            assert.equal(old.json<{ detail: string }>().detail, detail);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});
