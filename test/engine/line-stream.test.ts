import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_CONFIG } from '../../src/config.js';
import { LineAnswerer } from '../../src/engine/line-stream.js';
import { tallied } from '../../src/engine/items.js';

// The stream's answers are handed on in pieces (engine/line-stream.ts): by size, and after a few
// milliseconds of work however short they are, so that the HTTP route can let the event loop turn.

const lines = (count: number) => Buffer.from('{"operation":"isEven","input":2}\n'.repeat(count));
const ANSWER = '{"status":200,"result":{"ret":true}}\n';

test('a chunk of quick lines is one piece', (t) => {
  t.mock.method(performance, 'now', () => 0);
  const pieces = [...new LineAnswerer(DEFAULT_CONFIG).answers(lines(1000))];
  assert.deepEqual(pieces, [ANSWER.repeat(1000)]);
});

test('lines that take their time are handed on every 2 ms of work, the clock read every 4 KiB of lines', (t) => {
  // A clock that moves 2 ms each time it is read: every look at it finds a piece's time gone.
  let now = 0;
  t.mock.method(performance, 'now', () => (now += 2));
  const chunk = lines(1000); // 33 bytes a line: 125 lines make 4 KiB
  const pieces = [...new LineAnswerer(DEFAULT_CONFIG).answers(chunk)];
  assert.equal(pieces.join(''), ANSWER.repeat(1000));
  assert.equal(pieces.length, 8);
  for (const piece of pieces.slice(0, -1)) assert.equal(piece.split('\n').length - 1, 125);
});

test('a piece never grows past about 64 K characters', (t) => {
  t.mock.method(performance, 'now', () => 0);
  const pieces = [...new LineAnswerer(DEFAULT_CONFIG).answers(lines(10_000))];
  assert.equal(pieces.join(''), ANSWER.repeat(10_000));
  assert.ok(pieces.length > 1);
  for (const piece of pieces) assert.ok(piece.length < 64 * 1024 + ANSWER.length);
});

test('the tally counts each operation and status, toString among them, in own properties only', () => {
  const lines = new LineAnswerer(DEFAULT_CONFIG);
  const text = '{"operation":"toString","input":1}\n{"operation":"toString","input":[]}\n{"operation":"isEven","input":"x"}\n{"nope":1}\n';
  assert.equal([...lines.answers(Buffer.from(text))].join('').split('\n').length, 5);
  assert.deepEqual(
    [...tallied(lines.tally)],
    [
      ['toString', 200, 2],
      ['isEven', 400, 1],
      ['unknown', 400, 1],
    ],
  );
  // A plain object inherits a toString: counting it there would write onto Object.prototype.toString.
  const inherited: unknown = Object.getOwnPropertyDescriptor(Object.prototype, 'toString')?.value;
  assert.equal(Object.hasOwn(inherited as object, '200'), false);
});
