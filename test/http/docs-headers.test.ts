import assert from 'node:assert/strict';
import { test } from 'node:test';
import helmet from 'helmet';
import { API_HEADERS, DOCS_HELMET_OPTIONS } from '../../src/http/protocol/security-headers.js';
import { build } from './helper.js';

/** The headers helmet sets with the given options, as a header name → value map. */
function helmetHeaders(options: Parameters<typeof helmet>[0]): Record<string, string> {
  const set: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => void (set[name.toLowerCase()] = value),
    removeHeader: (name: string) => void delete set[name.toLowerCase()],
  };
  helmet(options)({} as never, response as never, () => undefined);
  return set;
}

test('the docs page and its files carry exactly the headers helmet sets with the docs options; the API keeps its own', async (t) => {
  const app = await build(t);
  const expected = helmetHeaders(DOCS_HELMET_OPTIONS);
  assert.match(expected['content-security-policy'] ?? '', /script-src 'self';/);
  for (const url of ['/api/docs', '/api/docs/static/swagger-ui.css', '/api/docs/static/swagger-initializer.js']) {
    const response = await app.inject({ method: 'GET', url });
    assert.equal(response.statusCode, 200, url);
    for (const [name, value] of Object.entries(expected)) assert.equal(response.headers[name], value, `${url}: ${name}`);
  }
  const api = await app.inject({ method: 'GET', url: '/api/isEven/4' });
  for (const [name, value] of Object.entries(API_HEADERS)) assert.equal(api.headers[name], value, name);
  assert.equal(api.headers['x-frame-options'], undefined);
});

test('with SECURITY_HEADERS=off the docs page carries none of them', async (t) => {
  const app = await build(t, { securityHeaders: 'off' });
  const response = await app.inject({ method: 'GET', url: '/api/docs/static/swagger-ui.css' });
  assert.equal(response.statusCode, 200);
  for (const name of Object.keys(helmetHeaders(DOCS_HELMET_OPTIONS))) assert.equal(response.headers[name], undefined, name);
});
