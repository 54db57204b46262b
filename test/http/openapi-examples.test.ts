import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { DEFAULT_CONFIG } from '../../src/config.js';
import { RATE_EXAMPLE } from '../../src/http/operations/schemas.js';
import { problemOf } from '../../src/operations/problem.js';
import { build } from './helper.js';

// The document as a generator's only input (docs/behaviour.md, "The OpenAPI document"): every
// schema named once, every example true to its schema and to what the service answers.

interface MediaType {
  schema?: { $ref?: string };
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
  'x-itemSchema'?: { $ref: string };
}
interface Response {
  content?: Record<string, MediaType>;
  headers?: Record<string, { $ref?: string; schema?: { examples?: unknown[] } }>;
}
interface Operation {
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; headers?: Record<string, { schema?: { examples?: unknown[] } }> };
}

const COMPONENT = '#/components/schemas/';

async function documentOf(app: FastifyInstance): Promise<Document> {
  return (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Document>();
}

/** Each operation of the document: where it is, and what it is. */
function operationsOf(document: Document): Array<[string, string, Operation]> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => [method, path, operation] as [string, string, Operation]),
  );
}

/** Every JSON object in a value, with its JSON Pointer. */
function* objectsIn(value: unknown, pointer = ''): Generator<[string, Record<string, unknown>]> {
  if (typeof value !== 'object' || value === null) return;
  if (!Array.isArray(value)) yield [pointer, value as Record<string, unknown>];
  for (const [key, child] of Object.entries(value)) yield* objectsIn(child, `${pointer}/${key}`);
}

/** A validator of the document's own schemas: `$ref`s into components.schemas resolve. */
function validatorOf(document: Document): (schema: object, value: unknown) => string | undefined {
  // The discriminator keyword is left out: Ajv's takes the `toString` tag for a duplicate
  // (ajv-validator/ajv#2650); `oneOf` alone decides the same items.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'document', components: document.components });
  return (schema, value) => {
    const rooted = JSON.parse(JSON.stringify(schema).replaceAll(`"${COMPONENT}`, `"document${COMPONENT}`)) as object;
    const validate = ajv.compile(rooted);
    return validate(value) ? undefined : ajv.errorsText(validate.errors);
  };
}

describe('the OpenAPI document names every schema once', () => {
  test('components.schemas has every request, answer, batch item, stream line and the problem, none named def-N', async (t) => {
    const document = await documentOf(await build(t));
    const names = Object.keys(document.components.schemas);
    assert.ok(names.length > 0, 'components.schemas is empty');
    assert.deepEqual(
      names.filter((name) => /^def-\d+$/.test(name)),
      [],
    );
    for (const name of [
      'Problem',
      'SortRequest',
      'SortResult',
      'BatchRequest',
      'BatchItem',
      'BatchAnswer',
      'StreamLine',
      'StreamAnswerLine',
      'StreamShutdownLine',
    ]) {
      assert.ok(names.includes(name), name);
    }
    // Every request body and every JSON answer refers to a named schema.
    for (const [method, path, operation] of operationsOf(document)) {
      const media = [
        ...Object.values(operation.requestBody?.content ?? {}),
        ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
      ];
      for (const { schema } of media.filter((each) => each.schema?.$ref !== undefined || !('x-itemSchema' in each))) {
        assert.match(schema?.$ref ?? '', /^#\/components\/schemas\/\w+$/, `${method} ${path}`);
      }
    }
  });

  test('no named schema or header is copied inline anywhere else', async (t) => {
    const document = await documentOf(await build(t));
    const named = new Map(
      [...Object.entries(document.components.schemas), ...Object.entries(document.components.headers ?? {})].map(([name, schema]) => [
        JSON.stringify(schema),
        name,
      ]),
    );
    const copies = [...objectsIn(document.paths, '#/paths')].flatMap(([pointer, object]) => {
      const name = named.get(JSON.stringify(object));
      return name === undefined ? [] : [`${pointer} is ${name}`];
    });
    assert.deepEqual(copies, []);
    const text = JSON.stringify(document);
    assert.equal(text.split('"RFC 9457 Problem Details"').length - 1, 1, 'the Problem schema once');
    // A header sent the same way on two answers is named once (components.headers) and referred to.
    const inline = new Map<string, number>();
    for (const [, , operation] of operationsOf(document)) {
      for (const response of Object.values(operation.responses)) {
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          if (!('$ref' in header)) inline.set(`${name} ${JSON.stringify(header)}`, (inline.get(`${name} ${JSON.stringify(header)}`) ?? 0) + 1);
        }
      }
    }
    assert.deepEqual(
      [...inline].filter(([, count]) => count > 1).map(([header]) => header),
      [],
    );
  });
});

describe('the OpenAPI document’s examples are true', () => {
  test('every example validates against its own schema, NDJSON lines against their line schema', async (t) => {
    const document = await documentOf(await build(t));
    const check = validatorOf(document);
    let checked = 0;
    for (const [method, path, operation] of operationsOf(document)) {
      const media = [
        ...Object.entries(operation.requestBody?.content ?? {}).map(([type, each]) => [`request ${type}`, each] as const),
        ...Object.entries(operation.responses).flatMap(([status, response]) =>
          Object.entries(response.content ?? {}).map(([type, each]) => [`${status} ${type}`, each] as const),
        ),
      ];
      for (const [where, { schema, example, examples, 'x-itemSchema': lineSchema }] of media) {
        const values = [...(example === undefined ? [] : [example]), ...Object.values(examples ?? {}).map(({ value }) => value)];
        for (const value of values) {
          assert.equal(check(schema ?? {}, value), undefined, `${method} ${path} ${where}: ${JSON.stringify(value).slice(0, 200)}`);
          if (lineSchema !== undefined && typeof value === 'string') {
            for (const line of value.split('\n').filter(Boolean))
              assert.equal(check(lineSchema, JSON.parse(line)), undefined, `${method} ${path} ${where}: ${line}`);
          }
          checked++;
        }
      }
    }
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      for (const value of (schema as { examples?: unknown[] }).examples ?? []) {
        assert.equal(check({ $ref: `${COMPONENT}${name}` }, value), undefined, `${name}: ${JSON.stringify(value)}`);
        checked++;
      }
    }
    assert.ok(checked > 100, `${checked} examples`);
  });

  test('every documented status of every operation has an example with that status and its title', async (t) => {
    const document = await documentOf(await build(t));
    for (const [method, path, operation] of operationsOf(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const problem = response.content?.['application/problem+json'];
        // A GET operation's 304 has no body (docs/operations.md, "Caches and CDNs").
        if (status === '304') {
          assert.equal(response.content, undefined, `${method} ${path} 304`);
          continue;
        }
        if (status === '200') {
          assert.ok(
            Object.values(response.content ?? {}).some((each) => each.example !== undefined || each.schema !== undefined),
            `${method} ${path} 200`,
          );
          continue;
        }
        assert.ok(problem?.example, `${method} ${path} ${status} has no example`);
        const { status: said, title } = problem.example as { status: number; title: string };
        assert.deepEqual([said, title], [Number(status), problemOf(Number(status), '').title], `${method} ${path} ${status}`);
      }
    }
  });

  test('each problem example is what the service answers the request that gets it', async (t) => {
    const app = await buildApp({ rateLimitMax: RATE_EXAMPLE.max, rateLimitWindowMs: 60_000 }, { logger: false });
    t.after(() => app.close());
    await app.ready();
    const document = await documentOf(app);
    const tooLarge = `{"input":"${'x'.repeat(DEFAULT_CONFIG.bodyLimit)}"}`;
    let compared = 0;
    for (const [method, path, operation] of operationsOf(document)) {
      const url = path.replace('{number}', '12345');
      const json = path === '/api/stream' ? 'application/x-ndjson' : 'application/json';
      const requests: Record<string, { method: string; url: string; payload?: string; type?: string }> = {
        400:
          method === 'get'
            ? { method: 'GET', url: path.replace('{number}', '%zz') }
            : path === '/api/stream'
              ? { method: 'SKIP', url }
              : { method: 'POST', url, payload: '{}' },
        405: { method: 'PUT', url },
        // A stream's line over its limit is answered in the stream, with a line.
        413: method === 'post' && path !== '/api/stream' ? { method: 'POST', url, payload: tooLarge } : { method: 'SKIP', url },
        414: { method: 'GET', url: path.replace('{number}', '1'.repeat(3 * DEFAULT_CONFIG.numberTextLimit + 65)) },
        415: { method: 'POST', url, payload: '{}', type: 'text/plain' },
      };
      for (const [status, request] of Object.entries(requests)) {
        const example = operation.responses[status]?.content?.['application/problem+json']?.example;
        if (example === undefined || request.method === 'SKIP') continue;
        const answer = await app.inject({
          method: request.method as 'GET',
          url: request.url,
          headers: { 'content-type': request.type ?? json },
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        assert.equal(answer.statusCode, Number(status), `${method} ${path}: ${request.method} ${request.url.slice(0, 60)}: ${answer.body.slice(0, 200)}`);
        assert.deepEqual(answer.json(), example, `${method} ${path} ${status}`);
        if (status === '405') {
          const allow = operation.responses[status]?.headers?.Allow;
          const described = allow?.$ref === undefined ? allow : document.components.headers?.[allow.$ref.replace('#/components/headers/', '')];
          assert.deepEqual([answer.headers.allow], described?.schema?.examples, `${method} ${path} Allow`);
        }
        compared++;
      }
    }
    // Past the rate limit: the 429 of the example's limit.
    let answer = await app.inject({ method: 'GET', url: '/api/isEven/2' });
    while (answer.statusCode !== 429) answer = await app.inject({ method: 'GET', url: '/api/isEven/2' });
    assert.deepEqual(answer.json(), document.paths['/api/isEven/{number}']?.get?.responses['429']?.content?.['application/problem+json']?.example);
    assert.ok(compared > 40, `${compared} answers compared`);
  });
});
