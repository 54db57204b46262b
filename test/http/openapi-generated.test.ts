import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { createClient } from '@hey-api/openapi-ts';
import openapiTS, { astToString } from 'openapi-typescript';
import { build } from './helper.js';

// The document as a generator's only input, with two TypeScript generators: openapi-typescript
// (https://openapi-ts.dev) makes the served document's types, and `tsc --strict` must accept a
// caller that narrows a batch item by `operation` to its own fields, an answer to its typed
// result, and a number beyond 2^53 in its exact form; @hey-api/openapi-ts (https://heyapi.dev)
// makes a client, whose call with that number, compiled as strictly and run against the service
// listening, gets the right answer.

const CALLER = `import type { components } from './api.js';
type Schemas = components['schemas'];

export function describe(item: Schemas['BatchItem']): string {
  switch (item.operation) {
    case 'sort': {
      const values: unknown[] = item.input;
      const order: 'asc' | 'desc' | undefined = item.order;
      return \`sort of \${values.length}, \${order ?? 'asc'}\`;
    }
    case 'stringSplit': {
      const text: string = item.input.string;
      return text;
    }
    case 'isEven':
    case 'isOdd': {
      const value: number | string = item.input;
      return String(value);
    }
    default:
      return item.operation;
  }
}

export const sorted = (answer: Schemas['SortAnswer']): unknown[] => answer.result.sortedArray;
export const parity = (answer: Schemas['BooleanAnswer']): boolean => answer.result.ret;
export const detail = (answer: Schemas['ProblemAnswer']): string => answer.problem.detail;
export const resume = (line: Schemas['StreamShutdownLine']): number => line.problem.answered + line.problem.retryAfter;

// Beyond 2^53: the string form, which no decoder rounds.
export const exact: Schemas['ParityRequest'] = { input: '9007199254740993' };
`;

/** `tsc --strict --noEmit` on a file and what it imports; fails the test with tsc's words. */
async function compileStrictly(directory: string, file: string): Promise<void> {
  const tsc = join(process.cwd(), 'node_modules/typescript/bin/tsc');
  const options = [
    '--strict',
    '--noEmit',
    '--skipLibCheck',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--lib',
    'es2022,dom,dom.iterable',
    '--typeRoots',
    join(process.cwd(), 'node_modules/@types'),
    '--types',
    'node',
  ];
  const compiled = await promisify(execFile)(process.execPath, [tsc, ...options, file], { cwd: directory }).catch((error: { stdout: string }) => ({
    stdout: error.stdout,
    failed: true,
  }));
  assert.ok(!('failed' in compiled), `tsc --strict on ${file} and the generated code:\n${compiled.stdout}`);
}

const CLIENT_CALLER = `import { client } from './client.gen.js';
import { batch, isOdd } from './sdk.gen.js';
import type { BatchItem } from './types.gen.js';

client.setConfig({ baseUrl: process.argv[2] });
const exact = await isOdd({ body: { input: '9007199254740993' } });
const items: BatchItem[] = [{ operation: 'isOdd', input: '9007199254740993' }, { operation: 'sort', input: [2, 1], order: 'desc' }];
const many = await batch({ body: { operations: items } });
process.stdout.write(JSON.stringify([exact.data, many.data]));
`;

test('@hey-api/openapi-ts makes a client of the served document that compiles strictly and sends 9007199254740993 exactly', async (t) => {
  const app = await build(t);
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const directory = mkdtempSync(join(tmpdir(), 'generated-'));
  writeFileSync(join(directory, 'openapi.json'), (await app.inject({ method: 'GET', url: '/api/openapi.json' })).body);
  await createClient({
    input: join(directory, 'openapi.json'),
    output: join(directory, 'client'),
    plugins: ['@hey-api/client-fetch'],
    logs: { level: 'silent' },
  });
  writeFileSync(join(directory, 'client', 'caller.ts'), CLIENT_CALLER);
  writeFileSync(join(directory, 'package.json'), '{"type":"module"}');
  await compileStrictly(join(directory, 'client'), 'caller.ts');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(directory, 'client', 'caller.ts'), base], { cwd: process.cwd() });
  assert.deepEqual(JSON.parse(stdout), [
    { ret: true },
    {
      answers: [
        { status: 200, result: { ret: true } },
        { status: 200, result: { sortedArray: [2, 1] } },
      ],
    },
  ]);
});

test('openapi-typescript types the served document: tsc --strict narrows batch items and keeps 9007199254740993 exact', async (t) => {
  const app = await build(t);
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Record<string, unknown>>();
  const directory = mkdtempSync(join(tmpdir(), 'generated-'));
  writeFileSync(join(directory, 'api.ts'), astToString(await openapiTS(document as unknown as Parameters<typeof openapiTS>[0])));
  writeFileSync(join(directory, 'caller.ts'), CALLER);
  await compileStrictly(directory, 'caller.ts');

  // The body the typed caller sends: the odd number 2^53 + 1, every digit kept.
  const answer = await app.inject({
    method: 'POST',
    url: '/api/isOdd',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ input: '9007199254740993' }),
  });
  assert.deepEqual(answer.json(), { ret: true });
});
