import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isNumber, NUMERIC_TEXT_PATTERN } from '../../src/core/index.js';

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
});

// The OpenAPI document's `pattern` for a number's string form says the same as the reading.
describe('NUMERIC_TEXT_PATTERN', () => {
  const pattern = new RegExp(NUMERIC_TEXT_PATTERN, 'u');
  for (const value of [...NUMBERS, ...NOT_NUMBERS].filter((each) => typeof each === 'string')) {
    test(`${show(value)}: ${isNumber(value)}`, () => assert.equal(pattern.test(value), isNumber(value)));
  }
  test('agrees with isNumber on strings built from the notation’s parts and on any string', () => {
    const parts = fc.constantFrom(
      ' ',
      '\t',
      '\n',
      '\u00a0',
      '\ufeff',
      '\u2028',
      '+',
      '-',
      '0',
      '1',
      '7',
      '9',
      '.',
      'e',
      'E',
      'x',
      'X',
      'o',
      'O',
      'b',
      'B',
      'f',
      'F',
      'g',
      'I',
      'n',
      '_',
    );
    const notationLike = fc.array(parts, { maxLength: 14 }).map((each) => each.join(''));
    fc.assert(
      fc.property(fc.oneof(notationLike, fc.string({ unit: 'binary' })), (text) => pattern.test(text) === isNumber(text)),
      { numRuns: 20_000 },
    );
  });
});
