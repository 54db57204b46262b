import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

// docs/development.md, "Adding an operation": a copy of the project gets one more operation the
// way a developer adds one (its declaration file and one entry in the table, nothing else; the build
// then generates the client's operations), and
// this finds it in the routes, the OpenAPI document, the client's methods and types, the CLI's
// commands and help, the batch, the stream, the worker threads, the memory estimate, and the test
// lists (the project's own tests that list the operations, run on the copy).

const run = promisify(execFile);
const root = new URL('../', import.meta.url).pathname;

const DECLARATION = `import { isMainThread } from 'node:worker_threads';
import { Type } from 'typebox';
import { BODY_ERRORS, defineOperation, example, JSON_OBJECT_BODY } from './define.js';
import { EXPECTED } from './problem.js';

export const reverse = defineOperation({
  path: '/reverse',
  summary: 'Reverse an array',
  description: 'The array in reverse order.',
  tag: 'sort',
  body: Type.Object(
    { input: Type.Array(Type.Unknown(), { [EXPECTED]: 'an array of JSON values' }) },
    { [EXPECTED]: JSON_OBJECT_BODY, 'x-examples': { numbers: example('Numbers', { input: [1, 2, 3] }) } },
  ),
  result: Type.Object({ reversed: Type.Array(Type.Unknown()) }),
  resultDescription: 'The reversed array',
  errors: BODY_ERRORS,
  largeResult: true,
  memory: 99,
  // "where" asks where it was answered: the worker threads answer a body over OFFLOAD_BODY_BYTES.
  answer: ({ input }) => ({ reversed: input[0] === 'where' ? [isMainThread ? 'event loop' : 'worker thread'] : [...input].reverse() }),
});
`;

const CHECK = `import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { buildApp } from '../src/app.js';
import { createClient, ProblemError } from '../packages/client/src/index.js';
import { COSTLIEST_BYTES_PER_BYTE } from '../src/http/memory/estimates.js';

test('the added operation is a route, an OpenAPI operation, a client method, a batch and stream item, a worker task, a memory estimate and a command', async (t) => {
  const app = await buildApp({ offloadBodyBytes: 1024 }, { logger: false });
  t.after(() => app.close());
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const client = createClient({ baseUrl: base });

  const answer: { reversed: unknown[] } = await client.reverse({ input: [1, 'a', null] });
  assert.deepEqual(answer, { reversed: [null, 'a', 1] });
  await assert.rejects(client.reverse({ input: 'abc' } as never), (error: unknown) => {
    assert.ok(error instanceof ProblemError);
    assert.deepEqual([error.status, error.errors[0]?.pointer, error.detail], [400, '/input', '/input must be an array of JSON values']);
    return true;
  });
  const refused = await fetch(base + '/api/reverse');
  assert.deepEqual([refused.status, refused.headers.get('allow')], [405, 'OPTIONS, POST']);

  const document = (await (await fetch(base + '/api/openapi.json')).json()) as any;
  assert.equal(document.paths['/api/reverse'].post.operationId, 'reverse');
  assert.deepEqual(document.paths['/api/reverse'].post.requestBody.content['application/json'].examples.numbers.value, { input: [1, 2, 3] });
  const items = document.paths['/api/batch'].post.requestBody.content['application/json'].schema.properties.operations.items.anyOf;
  assert.ok(items.some((item: { title: string }) => item.title === 'reverse'));

  assert.deepEqual(await client.batch([{ operation: 'reverse', input: [1, 2] }]), [{ status: 200, result: { reversed: [2, 1] } }]);
  const streamed = [];
  for await (const line of client.stream([{ operation: 'reverse', input: [3, 4] }, { operation: 'reverse', input: 5 } as never])) streamed.push(line);
  assert.deepEqual(streamed[0], { status: 200, result: { reversed: [4, 3] } });
  assert.equal(streamed[1]?.status, 400);

  assert.deepEqual(await client.reverse({ input: ['where'] }), { reversed: ['event loop'] });
  assert.deepEqual(await client.reverse({ input: ['where', 'x'.repeat(2048)] }), { reversed: ['worker thread'] });
  assert.equal(COSTLIEST_BYTES_PER_BYTE, 99);

  // Its standard output: --lines exits 1 when a line was answered with a problem, as the [] lines are.
  const cli = (args: string[], input = '') => spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { input, encoding: 'utf8' }).stdout;
  assert.equal(cli(['reverse', '{"input":[1,2]}']), '{"reversed":[2,1]}\\n');
  assert.match(cli(['--help']), /json-utility reverse \\[json-body\\]\\s+Reverse an array: the JSON body of POST \\/api\\/reverse/);
  const [first, second] = cli(['reverse', '--lines'], '{"input":[1,2]}\\n[]\\n').split('\\n').map((line) => (line === '' ? undefined : JSON.parse(line)));
  assert.deepEqual(first, { status: 200, result: { reversed: [2, 1] } });
  assert.match(second.problem.detail, /^The line must be an object with an "operation" field .*"reverse"/);
});
`;

test('an operation added by its declaration alone is found everywhere it must be', { timeout: 240_000 }, async (t) => {
  const copy = mkdtempSync(join(tmpdir(), 'json-utility-added-'));
  t.after(() => rmSync(copy, { recursive: true, force: true }));
  for (const part of ['src', 'test', 'scripts', 'bench', 'packages/client/src', 'package.json', 'tsconfig.json', 'tsconfig.test.json'])
    cpSync(join(root, part), join(copy, part), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));

  writeFileSync(join(copy, 'src/operations/reverse.ts'), DECLARATION);
  const index = join(copy, 'src/operations/index.ts');
  const table = readFileSync(index, 'utf8')
    .replace("import { stringSplit } from './string-split.js';", "import { stringSplit } from './string-split.js';\nimport { reverse } from './reverse.js';")
    .replace('  stringSplit,\n', '  stringSplit,\n  reverse,\n');
  assert.match(table, /stringSplit,\n {2}reverse,/, 'the table of src/operations/index.ts is not where this test adds to it');
  writeFileSync(index, table);
  writeFileSync(join(copy, 'test/added.test.ts'), CHECK);

  // Without NODE_TEST_CONTEXT, which this runner sets: a test run that has it reports to its parent and exits 0.
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  delete env.NODE_TEST_CONTEXT;
  const options = { cwd: copy, env, maxBuffer: 16 * 1024 * 1024 };
  const fail = (what: string) => (error: { stdout?: string; stderr?: string }) => assert.fail(`${what}:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  // The client's operations, generated from the declarations as `npm run build` does.
  await run(process.execPath, ['--import', 'tsx', 'scripts/client-operations.ts'], options).catch(fail('scripts/client-operations.ts'));
  // The typecheck: the client's method is typed by the new schemas (test/added.test.ts assigns its answer).
  await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.test.json'], options).catch(fail('tsc'));
  // The added operation, and the project's own tests that list the operations.
  const tests = [
    'added.test.ts',
    'test/operations-everywhere.test.ts',
    'test/http/protocol.test.ts',
    'test/http/batch-equivalence.test.ts',
    'test/client.test.ts',
  ];
  await run(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=dot', ...tests], options).catch(fail('the tests on the copy'));
});
