import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

// The test tiers of package.json (docs/development.md, "Tests"): the unit tier opens no socket and
// starts no process, so that it runs in seconds anywhere; test:quick holds it; test:suite, everything.
const root = new URL('../', import.meta.url);
const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts;
const filesOf = (script: string) => (scripts[script] ?? '').split(/\s+/).filter((word) => word.endsWith('.ts'));
const unit = filesOf('test:unit');

// What would open a socket or start a process: the network and process modules, listening, fetch,
// and the helper that starts the service (test/process.ts).
const OUTSIDE = /from 'node:(net|http|https|http2|child_process|cluster|dgram)'|\.listen\(|\bfetch\(|from '\.\.?\/process\.js'/;

test('the unit tier names files that exist, and none of them opens a socket or starts a process', () => {
  assert.ok(unit.length > 10);
  for (const file of unit) {
    assert.ok(existsSync(new URL(file, root)), `${file} does not exist`);
    const found = OUTSIDE.exec(readFileSync(new URL(file, root), 'utf8'));
    assert.equal(found, null, `${file} has ${found?.[0]}: it belongs in test:quick or test:suite, not test:unit`);
  }
});

test('test:quick runs every unit-tier file too', () => {
  const quick = filesOf('test:quick');
  const covered = (file: string) => quick.some((pattern) => new RegExp(`^${pattern.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`).test(file));
  for (const file of unit) assert.ok(covered(file), `${file} is not in test:quick`);
});
