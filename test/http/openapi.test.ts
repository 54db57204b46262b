import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CURRENT_OPERATION_IDS } from '../../src/operations/index.js';
import { promisify } from 'node:util';
import { LEGACY_ROUTES } from '../../src/http/operations/legacy-routes.js';
import { JSON_TYPE, build } from './helper.js';

const CURRENT_OPERATIONS = [
  ['post', '/api/sort'],
  ['post', '/api/isEven'],
  ['get', '/api/isEven/{number}'],
  ['post', '/api/isOdd'],
  ['get', '/api/isOdd/{number}'],
  ['post', '/api/isNumber'],
  ['get', '/api/isNumber/{number}'],
  ['post', '/api/toString'],
  ['post', '/api/stringSplit'],
] as const;
const OPERATIONS = [...CURRENT_OPERATIONS, ...LEGACY_ROUTES.map(({ path }) => ['post', path] as const)];

interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { schema: unknown; examples?: Record<string, unknown> }> };
  parameters?: Array<{ name: string; example?: unknown }>;
  responses: Record<string, { content: Record<string, { schema: unknown; example?: unknown }>; headers?: Record<string, { schema?: { type?: string } }> }>;
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

describe('GET /api/openapi.json', () => {
  test('is an OpenAPI 3.1 document of exactly the operations of the contract, current and legacy', async (t) => {
    const app = await build(t);
    const response = await app.inject({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], JSON_TYPE);
    const document = response.json<Document>();
    assert.equal(document.openapi, '3.1.0');
    const listed = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`));
    const many = ['post /api/batch', 'post /api/stream'];
    assert.deepEqual(listed.sort(), [...OPERATIONS.map(([method, path]) => `${method} ${path}`), ...many].sort());
  });

  test('documents the batch and the stream: each operation as its own schema, examples, answers and problems', async (t) => {
    const app = await build(t);
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Document>();
    const batch = document.paths['/api/batch']?.post;
    const body = batch?.requestBody?.content['application/json'];
    const items = (body?.schema as { properties: { operations: { items: { anyOf: Array<{ title: string; required: string[] }> } } } }).properties.operations
      .items;
    assert.deepEqual(
      items.anyOf.map((item) => item.title),
      CURRENT_OPERATION_IDS,
    );
    for (const item of items.anyOf) assert.equal(item.required[0], 'operation');
    assert.ok(Object.keys(body?.examples ?? {}).length >= 1);
    assert.ok(batch?.responses['200']?.content['application/json']?.schema);
    assert.deepEqual(Object.keys(batch?.responses ?? {}), ['200', '400', '413', '415', '429', '500', '503']);
    const stream = document.paths['/api/stream']?.post;
    assert.ok(stream?.requestBody?.content['application/x-ndjson']?.schema);
    assert.ok(stream?.responses['200']?.content['application/x-ndjson']?.schema);
  });

  test('comes from the schemas that validate: the request schemas are the route schemas', async (t) => {
    const app = await build(t);
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Document>();
    const sort = document.paths['/api/sort']?.post?.requestBody?.content['application/json']?.schema as {
      required: string[];
      properties: Record<string, unknown>;
    };
    assert.deepEqual(sort.required, ['input']);
    assert.deepEqual(Object.keys(sort.properties), ['input', 'order', 'locale']);
  });

  for (const [method, path] of OPERATIONS) {
    test(`${method.toUpperCase()} ${path} has examples and lists its problem responses`, async (t) => {
      const app = await build(t);
      const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Document>();
      const operation = document.paths[path]?.[method];
      assert.ok(operation);
      if (method === 'post') {
        const examples = operation.requestBody?.content['application/json']?.examples ?? {};
        assert.ok(Object.keys(examples).length >= 2, 'request examples');
      } else {
        assert.equal(operation.parameters?.[0]?.example, '12345');
      }
      const ok = operation.responses['200']?.content['application/json'];
      assert.ok(ok?.schema, 'response schema');
      assert.notEqual(ok.example, undefined, 'response example');
      const errors = Object.keys(operation.responses).filter((status) => status !== '200');
      assert.deepEqual(errors, method === 'post' ? ['400', '413', '415', '429', '500', '503'] : ['400', '405', '414', '429', '500', '503']);
      for (const status of errors) assert.ok(operation.responses[status]?.content['application/problem+json']?.schema, status);
      for (const status of ['429', '503']) assert.equal(operation.responses[status]?.headers?.['Retry-After']?.schema?.type, 'integer');
    });
  }

  test('passes the Redocly OpenAPI linter with no error and no warning', async (t) => {
    const app = await build(t);
    const directory = mkdtempSync(join(tmpdir(), 'openapi-'));
    const file = join(directory, 'openapi.json');
    writeFileSync(file, (await app.inject({ method: 'GET', url: '/api/openapi.json' })).body);
    const { stdout } = await promisify(execFile)('node_modules/.bin/redocly', ['lint', file, '--format=json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' },
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 }, JSON.stringify(report.problems, null, 2));
  });
});

describe('GET /api/docs', () => {
  test('is an HTML page whose every script, style and icon is served by this service', async (t) => {
    const app = await build(t);
    const page = await app.inject({ method: 'GET', url: '/api/docs' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(page.body, /<title>JSON utility service: API reference<\/title>/);
    const references = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    assert.ok(references.length >= 5);
    for (const reference of references) {
      assert.match(reference, /^\/api\/docs\//, `${reference} is local`);
      const asset = await app.inject({ method: 'GET', url: reference });
      assert.equal(asset.statusCode, 200, reference);
    }
  });

  test('loads the document from the service and sends nothing to an outside validator', async (t) => {
    const app = await build(t);
    const initializer = (await app.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' })).body;
    assert.match(initializer, /validatorUrl: null/);
    // One name for the document: the page loads /api/openapi.json, and the UI's own /api/docs/json redirects there.
    assert.match(initializer, /url: "\/api\/openapi\.json"/);
    assert.doesNotMatch(initializer, /\.\/json/);
    const old = await app.inject({ method: 'GET', url: '/api/docs/json' });
    assert.equal(old.statusCode, 301);
    assert.equal(old.headers.location, '/api/openapi.json');
  });
});
