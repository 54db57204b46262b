import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duplicateKeys } from './json-keys.js';

// The check every started server's log goes through (process.ts) finds a key given twice at any depth.
test('duplicateKeys finds a key given twice, at any depth, and nothing in a clean line', () => {
  assert.deepEqual(duplicateKeys('{"level":50,"pid":32477,"hostname":"vm","pid":32506,"msg":"worker died"}'), ['pid']);
  assert.deepEqual(duplicateKeys('{"a":{"b":1,"b":[{"c":1,"c":2}]},"d":"\\"pid\\":1"}'), ['a.b', 'a.b[0].c']);
  assert.deepEqual(duplicateKeys('{"level":30,"time":1,"pid":1,"workerPid":2,"msg":"x","n":-1.5e3,"ok":true,"none":null,"list":[]}'), []);
  assert.throws(() => duplicateKeys('{"a":1'), /not JSON/);
});
