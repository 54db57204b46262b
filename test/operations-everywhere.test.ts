import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildApp } from '../src/app.js';
import { COMMANDS } from '../src/cli-commands.js';
import { createClient } from '../packages/client/src/index.js';
import { CURRENT_OPERATION_IDS, LEGACY_OPERATION_IDS, OPERATIONS, servedAt, type Operation } from '../src/operations/index.js';

// docs/development.md, "Adding an operation": one declaration in src/operations reaches all of these.

const expected = [...CURRENT_OPERATION_IDS, ...LEGACY_OPERATION_IDS].flatMap((id) => {
  const operation = OPERATIONS[id] as Operation;
  const path = servedAt(operation);
  return [
    { operationId: id, method: 'POST', path, openApiPath: path },
    ...(operation.byPath === undefined ? [] : [{ operationId: `${id}ByPath`, method: 'GET', path: `${path}/:number`, openApiPath: `${path}/{number}` }]),
  ];
});

test('the operation table has every current and every legacy operation, and nothing else', () => {
  assert.deepEqual([...CURRENT_OPERATION_IDS, ...LEGACY_OPERATION_IDS].sort(), Object.keys(OPERATIONS).sort());
});

test('every declared operation is a route and an operation of the OpenAPI document, and the document has no other', async (t) => {
  const app = await buildApp({}, { logger: false });
  t.after(() => app.close());
  await app.ready();
  const document = app.swagger() as unknown as { paths: Record<string, Record<string, { operationId: string }>> };
  const documented = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ operationId: operation.operationId, method: method.toUpperCase(), openApiPath: path })),
  );
  for (const { operationId, method, path, openApiPath } of expected) {
    assert.ok(app.hasRoute({ method, url: path }), `${operationId}: no route ${method} ${path}`);
    assert.ok(
      documented.some((entry) => entry.operationId === operationId && entry.method === method && entry.openApiPath === openApiPath),
      `${operationId}: not in the OpenAPI document as ${method} ${openApiPath}`,
    );
  }
  // Besides them, the batch and the stream, which carry many of them (batch-route.ts, stream-route.ts).
  assert.deepEqual(documented.map((entry) => entry.operationId).sort(), [...expected.map((entry) => entry.operationId), 'batch', 'stream'].sort());
});

test('every declared operation is a method of the typed client, which calls its route', async () => {
  const asked: string[] = [];
  const client = createClient({
    baseUrl: 'http://service',
    fetch: (url, init) => {
      asked.push(`${init?.method} ${url as string}`);
      return Promise.resolve(new Response('{}'));
    },
  });
  for (const { operationId, method, path } of expected) {
    const call = (client as unknown as Record<string, ((input: object) => Promise<unknown>) | undefined>)[operationId];
    assert.ok(call !== undefined, `${operationId}: not a method of the client`);
    await call({ number: '1' });
    assert.equal(asked.pop(), `${method} http://service${path.replace(':number', '1')}`);
  }
});

test("the earlier revision's operations are named legacy…, which is how the types tell them from the current ones", () => {
  for (const id of LEGACY_OPERATION_IDS) assert.match(id, /^legacy[A-Z]/);
  for (const id of CURRENT_OPERATION_IDS) assert.doesNotMatch(id, /^legacy/);
});

test('every current operation is a command of the json-utility CLI, and every command an operation', () => {
  assert.deepEqual([...COMMANDS.keys()].sort(), [...CURRENT_OPERATION_IDS].sort());
});
