/**
 * Generates src/client/operations.generated.ts from the OpenAPI document the service serves
 * (`npm run generate:client`); test/client.test.ts fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.js';

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
}

interface Operation {
  operationId: string;
  deprecated?: boolean;
  summary?: string;
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: { 'application/json': { schema: Schema } } };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

const MANY = new Set(['batch', 'stream']);

export const TARGET = new URL('../src/client/operations.generated.ts', import.meta.url);

/** A TypeScript type for the JSON Schema subset the service's schemas use. */
function typeOf(schema: Schema, indent = ''): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  if (schema.anyOf !== undefined) return schema.anyOf.map((s) => typeOf(s, indent)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      return `Array<${schema.items === undefined ? 'unknown' : typeOf(schema.items, indent)}>`;
    case 'object': {
      const inner = `${indent}  `;
      const fields = Object.entries(schema.properties ?? {}).map(
        ([name, property]) => `${inner}${JSON.stringify(name)}${schema.required?.includes(name) ? '' : '?'}: ${typeOf(property, inner)};`,
      );
      return `{\n${fields.join('\n')}\n${indent}}`;
    }
    default:
      return 'unknown';
  }
}

export async function generateClientSource(): Promise<string> {
  const app = await buildApp({}, { logger: false });
  await app.ready();
  const document = app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> };
  await app.close();

  const types: string[] = [];
  const table: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      // Written by hand in src/client/index.ts, typed per operation from the types generated here.
      if (MANY.has(operation.operationId)) continue;
      const body = operation.requestBody?.content['application/json']?.schema;
      const params = operation.parameters?.filter((p) => p.in === 'path').map((p) => p.name) ?? [];
      const response = operation.responses['200']?.content?.['application/json']?.schema ?? {};
      const input = body !== undefined ? typeOf(body, '    ') : `{ ${params.map((p) => `${p}: string`).join('; ')} }`;
      types.push(
        `  /** ${operation.summary ?? ''}${operation.deprecated === true ? ' @deprecated' : ''} */\n` +
          `  ${operation.operationId}: {\n    input: ${input};\n    output: ${typeOf(response, '    ')};\n  };`,
      );
      table.push(
        `  ${operation.operationId}: { method: '${method.toUpperCase()}', path: '${path}', input: '${body !== undefined ? 'body' : 'path'}', deprecated: ${operation.deprecated === true} },`,
      );
    }
  }
  return `// Generated from the service's OpenAPI document by scripts/generate-client.ts. Do not edit:
// run \`npm run generate:client\` after changing a schema.

/** Each operation's input (the JSON body, or the path parameters) and its 200 response. */
export interface Operations {
${types.join('\n')}
}

/** How each operation is called. */
export const OPERATIONS = {
${table.join('\n')}
} as const satisfies Record<keyof Operations, { method: string; path: string; input: 'body' | 'path'; deprecated: boolean }>;
`;
}

if (process.argv[1]?.endsWith('generate-client.ts')) {
  writeFileSync(TARGET, await generateClientSource());
}
