/**
 * Writes the generated tables (`npm run readme:tables`): the configuration table from src/config.ts
 * into docs/operations.md and the migration table from the legacy route table into docs/earlier-revision.md.
 * test/readme.test.ts fails when a copy differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { SETTINGS, type AccessLog } from '../src/config.js';
import { LEGACY_ROUTES } from '../src/http/operations/legacy-routes.js';

const shown = (value: unknown): string => {
  if (value === undefined) return 'unset';
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object' && value !== null && 'mode' in value) {
    const policy = value as AccessLog;
    return policy.mode === 'sample' ? `sample:${policy.every}` : policy.mode;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new TypeError(`no README form for ${JSON.stringify(value)}`);
};

function configTable(): string {
  const rows = Object.values(SETTINGS).map((s) => `| \`${s.env}\` | \`${shown(s.default)}\` | ${s.accepts} | ${s.meaning} |`);
  return ['| Variable | Default | Accepts | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

function migrationTable(): string {
  const rows = LEGACY_ROUTES.map(
    (r) => `| \`POST ${r.path}\` \`${r.request}\` | \`${r.response}\` | \`POST ${r.successor}\` \`${r.successorRequest}\` | \`${r.successorResponse}\` |`,
  );
  return ['| Earlier request | Earlier response | Current request | Current response |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** Each file with generated tables, and the tables it holds. */
export const GENERATED: Readonly<Record<string, Readonly<Record<string, () => string>>>> = {
  'docs/earlier-revision.md': { 'migration-table': migrationTable },
  'docs/operations.md': { 'config-table': configTable },
};

/** A file's text with each of its generated tables written anew between its `<!-- name:start/end -->` markers. */
export function withTables(file: string, original: string): string {
  let text = original;
  for (const [name, table] of Object.entries(GENERATED[file] ?? {})) {
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`${file} needs ${start} and ${end}`);
    text = `${text.slice(0, from + start.length)}\n${table()}\n${text.slice(to)}`;
  }
  return text;
}

if (process.argv[1]?.endsWith('readme-tables.ts')) {
  for (const file of Object.keys(GENERATED)) writeFileSync(file, withTables(file, readFileSync(file, 'utf8')));
}
