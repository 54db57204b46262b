/**
 * Writes the README's configuration table from src/config.ts (`npm run readme:config`);
 * test/config.test.ts fails when the README's copy differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { SETTINGS } from '../src/config.js';

export const START = '<!-- config-table:start -->';
export const END = '<!-- config-table:end -->';

const shown = (value: unknown): string => (Array.isArray(value) ? value.join(',') : String(value));

export function configTable(): string {
  const rows = Object.values(SETTINGS).map((s) => `| \`${s.env}\` | \`${shown(s.default)}\` | ${s.accepts} | ${s.meaning} |`);
  return ['| Variable | Default | Accepts | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

export function readmeWithTable(readme: string): string {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md needs ${START} and ${END}`);
  return `${readme.slice(0, start + START.length)}\n${configTable()}\n${readme.slice(end)}`;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop() as string)) {
  const readme = readFileSync('README.md', 'utf8');
  writeFileSync('README.md', readmeWithTable(readme));
}
