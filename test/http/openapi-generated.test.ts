import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { build } from './helper.js';

// The document as a generator's only input: openapi-typescript (https://openapi-ts.dev) makes
// the types of the served document, and `tsc --strict` must accept a caller that narrows a batch
// item by `operation` to its own fields, an answer to its typed result, and sends a number beyond
// 2^53 in its exact form; that body, sent, gets the right answer.

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

test('openapi-typescript types the served document: tsc --strict narrows batch items and keeps 9007199254740993 exact', async (t) => {
  const app = await build(t);
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json<Record<string, unknown>>();
  const directory = mkdtempSync(join(tmpdir(), 'generated-'));
  writeFileSync(join(directory, 'api.ts'), astToString(await openapiTS(document as unknown as Parameters<typeof openapiTS>[0])));
  writeFileSync(join(directory, 'caller.ts'), CALLER);
  const tsc = join(process.cwd(), 'node_modules/typescript/bin/tsc');
  const compiled = await promisify(execFile)(
    process.execPath,
    [tsc, '--strict', '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', 'caller.ts'],
    { cwd: directory },
  ).catch((error: { stdout: string }) => ({ stdout: error.stdout, failed: true }));
  assert.ok(!('failed' in compiled), `tsc --strict on the generated types:\n${compiled.stdout}`);

  // The body the typed caller sends: the odd number 2^53 + 1, every digit kept.
  const answer = await app.inject({
    method: 'POST',
    url: '/api/isOdd',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ input: '9007199254740993' }),
  });
  assert.deepEqual(answer.json(), { ret: true });
});
