import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InputError, isEven, isOdd, type IntegerLike } from '../../src/core/index.js';

const show = (value: IntegerLike): string =>
  typeof value === 'string' ? JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value) : `${value}${typeof value === 'bigint' ? 'n' : ''}`;

// docs/behaviour.md §2.2 Parity: exact at any magnitude, integrality from the text.
const EVEN: IntegerLike[] = [
  0,
  -0,
  2,
  -4,
  2 ** 60,
  Number.MAX_VALUE,
  10n ** 30n,
  '0',
  '-0',
  '+0',
  '0.0',
  '4.0',
  '4.000',
  '-12',
  '1e3',
  '1E3',
  '1e400',
  '20e-1',
  '0x1E',
  '0o10',
  '0b10',
  '00',
  '0e5',
  '123456789012345678901234567890',
  '9007199254740994',
  ' 8 ',
  '\u00a08\ufeff',
  '1' + '0'.repeat(9999),
  '0.2e1',
  '.2e1',
  '2.',
  '12e999999999999999999999',
];
const ODD: IntegerLike[] = [
  1,
  -1,
  3,
  9007199254740991,
  -(2 ** 53 - 1),
  10n ** 30n + 1n,
  '1',
  '-1',
  '9007199254740993',
  '9007199254740995',
  '123456789012345678901234567891',
  '0x1F',
  '0o7',
  '0b1',
  '1.0',
  '100e-2',
  '0.3e1',
  '1' + '0'.repeat(9998) + '1',
  '-7.00000',
  '0000000007',
];
const NOT_INTEGERS: IntegerLike[] = [
  2.5,
  -0.5,
  1e-7,
  '2.5',
  '1.9999999999999999',
  '4.0000000000000001',
  '1e-1',
  '0.5',
  '.5',
  '5e-324',
  '1' + '0'.repeat(50) + '1e-1',
  '123e-400',
];
const NOT_NUMBERS: unknown[] = [Infinity, -Infinity, NaN, 'abc', '', '  ', 'Infinity', 'NaN', '1_000', '-0x10', '12px', true, null, [], {}, undefined];

describe('isEven and isOdd', () => {
  for (const value of EVEN) {
    test(`${show(value)} is even`, () => {
      assert.equal(isEven(value), true);
      assert.equal(isOdd(value), false);
    });
  }
  for (const value of ODD) {
    test(`${show(value)} is odd`, () => {
      assert.equal(isEven(value), false);
      assert.equal(isOdd(value), true);
    });
  }
  for (const value of NOT_INTEGERS) {
    test(`${show(value)} is refused: not an integer`, () => {
      assert.throws(() => isEven(value), new InputError('must be an integer'));
      assert.throws(() => isOdd(value), new InputError('must be an integer'));
    });
  }
  for (const value of NOT_NUMBERS) {
    test(`${String(JSON.stringify(value))} is refused: not a number`, () => {
      assert.throws(
        () => isEven(value as IntegerLike),
        (error: unknown) => error instanceof InputError && /must be a number/.test(error.message),
      );
    });
  }

  test('property: isOdd is exactly !isEven on every accepted value', () => {
    const integerText = fc.tuple(fc.bigInt(), fc.nat(5), fc.integer({ min: -3, max: 3 })).map(([n, zeros, shift]) => {
      // n × 10^zeros written with its point moved by `shift` places and an exponent undoing it.
      const digits = (n < 0n ? -n : n).toString() + '0'.repeat(zeros);
      return `${n < 0n ? '-' : ''}${digits}e${shift}`.replace(/e0$/, '');
    });
    fc.assert(
      fc.property(fc.oneof(integerText, fc.integer(), fc.bigInt(), fc.double({ noNaN: true, noDefaultInfinity: true })), (value) => {
        let even: boolean | undefined;
        let odd: boolean | undefined;
        try {
          even = isEven(value);
        } catch {
          even = undefined;
        }
        try {
          odd = isOdd(value);
        } catch {
          odd = undefined;
        }
        assert.equal(odd, even === undefined ? undefined : !even);
      }),
    );
  });

  test('property: an integer string has the parity of its BigInt, at any size', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 80n), max: 10n ** 80n }), fc.constantFrom('', ' ', '\u00a0'), (n, pad) => {
        assert.equal(isEven(`${pad}${n}${pad}`), n % 2n === 0n);
        assert.equal(isOdd(`${n}.000`), n % 2n !== 0n);
        if (n >= 0n) assert.equal(isEven(`0x${n.toString(16)}`), n % 2n === 0n);
      }),
    );
  });
});
