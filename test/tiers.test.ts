import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { allTestFiles, QUICK, SERIAL, slowTestFiles, UNIT } from '../scripts/test-tiers.js';

// The test tiers of scripts/test-tiers.ts (docs/development.md, "Tests"): the unit tier opens no socket and
// starts no process, so that it runs in seconds anywhere; test:quick holds it; test:suite, everything.
const root = new URL('../', import.meta.url);

// What would open a socket or start a process: the network and process modules, listening, fetch,
// and the helper that starts the service (test/process.ts).
const OUTSIDE = /from 'node:(net|http|https|http2|child_process|cluster|dgram)'|\.listen\(|\bfetch\(|from '\.\.?\/process\.js'/;

test('the unit tier names files that exist, and none of them opens a socket or starts a process', () => {
  assert.ok(UNIT.length > 10);
  for (const file of UNIT) {
    assert.ok(existsSync(new URL(file, root)), `${file} does not exist`);
    const found = OUTSIDE.exec(readFileSync(new URL(file, root), 'utf8'));
    assert.equal(found, null, `${file} has ${found?.[0]}: it belongs in QUICK or the slow tier, not UNIT`);
  }
});

test('every test file is in exactly one tier, and every named file exists', () => {
  const named = [...UNIT, ...QUICK, ...SERIAL];
  assert.equal(new Set(named).size, named.length, 'a file named twice');
  for (const file of named) assert.ok(existsSync(new URL(file, root)), `${file} does not exist`);
  const all = allTestFiles();
  assert.ok(all.includes('test/core/sort.test.ts') && !all.some((file) => file.startsWith('test/deploy/')));
  assert.deepEqual([...named, ...slowTestFiles()].sort(), all);
});

test('package.json runs the tiers through scripts/run-tests.ts, and npm test runs the suite', () => {
  const scripts = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.equal(scripts['test:unit'], 'tsx scripts/run-tests.ts unit');
  assert.equal(scripts['test:quick'], 'tsx scripts/run-tests.ts quick');
  assert.match(scripts['test:suite'] ?? '', /tsx scripts\/run-tests\.ts suite$/);
  assert.match(scripts.test ?? '', /npm run test:suite/);
});
