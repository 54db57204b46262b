import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepValues } from '../../src/engine/json-text.js';

// The one depth scanner (engine/json-text.ts), for a single body and for a batch's items.

const scan = (text: string, limit: number, within?: string, first = false) =>
  deepValues(Buffer.from(text), limit, within === undefined ? undefined : Buffer.from(within), first);

test('a single body: the top-level member that nests too deep, found on the bytes', () => {
  assert.deepEqual(scan('{"a":1,"b":[[2]]}', 2, undefined, true), [{ start: 0, end: 17, index: undefined, pointer: '/b' }]);
  assert.deepEqual(scan('{"a":1,"b":[[2]]}', 3), []);
  assert.deepEqual(scan('{"a/b~":[[[0]]]}', 2)[0]?.pointer, '/a~1b~0');
  // Not an object at the top: no member to name. Brackets in strings do not count.
  assert.deepEqual(scan('[[["x"]]]', 2)[0]?.pointer, '');
  assert.deepEqual(scan('{"s":"[[[[[[","t":1}', 2), []);
  // Never closed (a body cut short): still found, up to the end of the text.
  assert.deepEqual(scan('{"input":[[[[', 3), [{ start: 0, end: 13, index: undefined, pointer: '/input' }]);
});

test('a batch: each item of "operations" that nests too deep, by index, with its member; and any other member', () => {
  const batch = '{"operations":[{"input":1},{"operation":"sort","input":[[[1]]]},["a","b",[[[2]]]],{"x":2}],"other":[[[[[3]]]]]}';
  const found = scan(batch, 5, '"operations"');
  assert.deepEqual(
    found.map(({ index, pointer }) => ({ index, pointer })),
    [
      { index: 1, pointer: '/input' },
      // An array item has no members: a string in it is never taken for a key.
      { index: 2, pointer: '' },
      { index: undefined, pointer: '' },
    ],
  );
  for (const { start, end } of found) assert.doesNotThrow(() => JSON.parse(batch.slice(start, end)) as unknown);
  assert.deepEqual(scan(batch, 6, '"operations"'), []);
});
