import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CURRENT_OPERATION_IDS } from '../../src/operations/index.js';
import { BODY_ERRORS, PATH_ERRORS } from '../../src/operations/define.js';
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
  requestBody?: { content: Record<string, MediaType> };
  parameters?: Array<{ name: string; example?: unknown }>;
  responses: Record<string, { content: Record<string, MediaType>; headers?: Record<string, { schema?: { type?: string } }> }>;
}
interface MediaType {
  schema: unknown;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
  'x-itemSchema'?: unknown;
}
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; headers?: Record<string, { schema?: { type?: string } }> };
};

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

  test('documents the batch and the stream: named items discriminated by operation, typed answers, line schemas', async (t) => {
    const app = await build(t);
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Document>();
    const schemas = document.components.schemas;
    const batch = document.paths['/api/batch']?.post;
    const body = batch?.requestBody?.content['application/json'];
    assert.deepEqual(body?.schema, { $ref: '#/components/schemas/BatchRequest' });
    assert.ok(Object.keys(body?.examples ?? {}).length >= 1);
    const item = schemas.BatchItem as { oneOf: Array<{ $ref: string }>; discriminator: { propertyName: string; mapping: Record<string, string> } };
    const itemNames = CURRENT_OPERATION_IDS.map((id) => `${id.charAt(0).toUpperCase()}${id.slice(1)}Item`);
    assert.deepEqual(
      item.oneOf.map(({ $ref }) => $ref),
      itemNames.map((name) => `#/components/schemas/${name}`),
    );
    assert.equal(item.discriminator.propertyName, 'operation');
    assert.deepEqual(Object.keys(item.discriminator.mapping), CURRENT_OPERATION_IDS);
    for (const [id, target] of Object.entries(item.discriminator.mapping)) {
      const named = schemas[target.replace('#/components/schemas/', '')] as { properties: { operation: { enum?: string[]; const?: string } } };
      assert.deepEqual(named.properties.operation.enum ?? [named.properties.operation.const], [id]);
    }
    assert.deepEqual(batch?.responses['200']?.content['application/json']?.schema, { $ref: '#/components/schemas/BatchAnswer' });
    assert.notEqual(batch?.responses['200']?.content['application/json']?.example, undefined);
    assert.deepEqual(Object.keys(batch?.responses ?? {}), ['200', ...BODY_ERRORS.map(String)]);
    const stream = document.paths['/api/stream']?.post;
    assert.deepEqual(stream?.requestBody?.content['application/x-ndjson']?.['x-itemSchema'], { $ref: '#/components/schemas/StreamLine' });
    assert.deepEqual(stream?.responses['200']?.content['application/x-ndjson']?.['x-itemSchema'], { $ref: '#/components/schemas/StreamAnswerLine' });
    for (const name of ['StreamLine', 'StreamAnswerLine', 'StreamShutdownLine', 'ItemAnswer', 'ProblemAnswer']) assert.ok(schemas[name], name);
  });

  test('the batch and stream examples are what the service answers', async (t) => {
    const app = await build(t);
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Document>();
    const batch = document.paths['/api/batch']?.post;
    const sent = (batch?.requestBody?.content['application/json']?.examples as Record<string, { value: unknown }>).mixed?.value;
    const answer = await app.inject({ method: 'POST', url: '/api/batch', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(sent) });
    assert.deepEqual(answer.json(), batch?.responses['200']?.content['application/json']?.example);
    const stream = document.paths['/api/stream']?.post;
    const lines = stream?.requestBody?.content['application/x-ndjson']?.example as string;
    const answered = await app.inject({ method: 'POST', url: '/api/stream', headers: { 'content-type': 'application/x-ndjson' }, payload: lines });
    assert.equal(answered.body, (stream?.responses['200']?.content['application/x-ndjson']?.schema as { examples: string[] }).examples[0]);
  });

  test('comes from the schemas that validate: the request schemas are the route schemas', async (t) => {
    const app = await build(t);
    const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Document>();
    assert.deepEqual(document.paths['/api/sort']?.post?.requestBody?.content['application/json']?.schema, { $ref: '#/components/schemas/SortRequest' });
    const sort = document.components.schemas.SortRequest as { required: string[]; properties: Record<string, unknown> };
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
      const errors = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
      // A GET operation's answer may be kept (protocol/caching.ts): its 200 and 304 say how.
      const cacheHeaders = (status: string) =>
        Object.keys(operation.responses[status]?.headers ?? {}).filter((name) => ['Cache-Control', 'ETag'].includes(name));
      assert.deepEqual(
        [cacheHeaders('200'), cacheHeaders('304')],
        method === 'post'
          ? [[], []]
          : [
              ['Cache-Control', 'ETag'],
              ['Cache-Control', 'ETag'],
            ],
      );
      assert.equal(operation.responses['304'] === undefined, method === 'post');
      assert.deepEqual(errors, (method === 'post' ? BODY_ERRORS : PATH_ERRORS).map(String));
      for (const status of errors)
        assert.deepEqual(operation.responses[status]?.content['application/problem+json']?.schema, { $ref: '#/components/schemas/Problem' }, status);
      for (const status of ['429', '503']) {
        const retryAfter = operation.responses[status]?.headers?.['Retry-After'] as { $ref: string };
        assert.deepEqual(retryAfter, { $ref: '#/components/headers/Retry-After' });
        assert.equal(document.components.headers?.['Retry-After']?.schema?.type, 'integer');
      }
    });
  }

  test('passes the Redocly OpenAPI linter with no error and no warning', async (t) => {
    const app = await build(t);
    const directory = mkdtempSync(join(tmpdir(), 'openapi-'));
    writeFileSync(join(directory, 'openapi.json'), (await app.inject({ method: 'GET', url: '/api/openapi.json' })).body);
    // The two problems it reports that are not the document's, each with its reason in the file.
    copyFileSync(new URL('redocly-lint-ignore.yaml', import.meta.url), join(directory, '.redocly.lint-ignore.yaml'));
    const { stdout } = await promisify(execFile)(join(process.cwd(), 'node_modules/.bin/redocly'), ['lint', 'openapi.json', '--format=json'], {
      cwd: directory,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' },
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    assert.deepEqual(report.totals, { ...report.totals, errors: 0, warnings: 0 }, JSON.stringify(report.problems, null, 2));
  });
  test('passes Spectral’s OpenAPI ruleset with no error and no warning', async (t) => {
    const app = await build(t);
    const directory = mkdtempSync(join(tmpdir(), 'openapi-'));
    writeFileSync(join(directory, 'openapi.json'), (await app.inject({ method: 'GET', url: '/api/openapi.json' })).body);
    // spectral:oas, with the one rule it turns off and why (test/http/spectral-ruleset.yaml).
    copyFileSync(new URL('spectral-ruleset.yaml', import.meta.url), join(directory, '.spectral.yaml'));
    const { stdout } = await promisify(execFile)(join(process.cwd(), 'node_modules/.bin/spectral'), ['lint', 'openapi.json', '--format=json', '--quiet'], {
      cwd: directory,
      env: { ...process.env, NO_COLOR: '1' },
    }).catch((error: { stdout: string }) => error);
    const problems = JSON.parse(stdout || '[]') as Array<{ code: string; severity: number; message: string; path: string[] }>;
    // Severity 0 is an error, 1 a warning.
    assert.deepEqual(
      problems.filter(({ severity }) => severity <= 1).map(({ code, message, path }) => `${code}: ${message} at ${path.join('/')}`),
      [],
    );
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
