import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isNumber } from '../../src/core/index.js';
import { cpuMillis } from '../cpu-time.js';

const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value).slice(0, 60) : String(value));

// docs/behaviour.md §2.1 "What counts as a number": JavaScript's Number(string) grammar, any magnitude.
const NUMBERS: unknown[] = [
  0,
  -0,
  12,
  -1.5,
  1e21,
  5e-324,
  Number.MAX_VALUE,
  Infinity /* a literal such as 1e400 */,
  9007199254740993n,
  '12',
  '-12',
  '+12',
  ' -1.5e3 ',
  '.5',
  '5.',
  '-.5',
  '1e400',
  '1E+3',
  '1e-7',
  '00012',
  '0.0',
  '0x1F',
  '0XaBc',
  '0o17',
  '0O7',
  '0b101',
  '0B1',
  '\u00a012\u00a0',
  '\ufeff12',
  '\t\n12\r\n',
  '\u2028 7 \u2029',
  '\u3000 3',
  '1'.repeat(400),
  `${'9'.repeat(5000)}.${'1'.repeat(5000)}e-99999999999999999999`,
];

const NOT_NUMBERS: unknown[] = [
  'Infinity',
  '-Infinity',
  '+Infinity',
  'NaN',
  '1_000',
  '12px',
  '-0x10',
  '+0x10',
  '0x',
  '0xG',
  '0o8',
  '0b2',
  '.',
  '+',
  '-',
  '1e',
  '1e+',
  'e5',
  '',
  '   ',
  '\u200b1',
  '1 2',
  '1..2',
  '..5',
  '1.2.3',
  '0x1.5',
  '١٢',
  '１２',
  '12n',
  '--1',
  '1e1.5',
  true,
  false,
  null,
  [],
  [1],
  {},
  { input: 1 },
  undefined,
  NaN,
];

describe('isNumber', () => {
  for (const value of NUMBERS) test(`${show(value)} is a number`, () => assert.equal(isNumber(value), true));
  for (const value of NOT_NUMBERS) test(`${show(value)} is not a number`, () => assert.equal(isNumber(value), false));

  test('a string of a million digits followed by a letter answers in linear time', async () => {
    const elapsed = await cpuMillis(() => {
      assert.equal(isNumber(`${'1'.repeat(1_000_000)}x`), false);
      assert.equal(isNumber(`${'1'.repeat(1_000_000)}.${'2'.repeat(1_000_000)}e`), false);
    });
    assert.ok(elapsed < 1000, `${elapsed} ms`);
  });
});
