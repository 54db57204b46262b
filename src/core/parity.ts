import { InputError } from './errors.js';
import { parseNumericText } from './numeric-text.js';

/** A number as the parity operations accept it: exact digits in a string, a double, or a bigint. */
export type IntegerLike = string | number | bigint;

const NOT_A_NUMBER = 'must be a number, or a string in numeric notation such as "42", "-1e3" or "0x1F"';
const NOT_AN_INTEGER = 'must be an integer';

/**
 * Tells whether `value` is an even integer, exactly at any magnitude: a string is read from
 * its digits and never rounded through a double. Throws `InputError` for anything that is not
 * an integer.
 *
 * @example
 * isEven(4)                                  //=> true
 * isEven('9007199254740993')                 //=> false
 * isEven('1e400')                            //=> true
 * isEven('0x1F')                             //=> false
 * isEven('2.5')                              // throws InputError('must be an integer')
 */
export function isEven(value: IntegerLike): boolean {
  return parityBit(value) === 0;
}

/**
 * Tells whether `value` is an odd integer; exactly `!isEven(value)` for every accepted value.
 *
 * @example
 * isOdd('9007199254740993') //=> true
 * isOdd(-0)                 //=> false
 */
export function isOdd(value: IntegerLike): boolean {
  return parityBit(value) === 1;
}

function parityBit(value: IntegerLike): 0 | 1 {
  switch (typeof value) {
    case 'bigint':
      return value % 2n === 0n ? 0 : 1;
    case 'number':
      if (!Number.isFinite(value)) throw new InputError(NOT_A_NUMBER);
      if (!Number.isInteger(value)) throw new InputError(NOT_AN_INTEGER);
      return value % 2 === 0 ? 0 : 1;
    case 'string':
      return parityOfText(value);
    default:
      throw new InputError(NOT_A_NUMBER);
  }
}

function parityOfText(text: string): 0 | 1 {
  const notation = parseNumericText(text.trim());
  if (notation === undefined) throw new InputError(NOT_A_NUMBER);
  const { digits } = notation;
  if (notation.kind === 'radix') {
    // Every radix here is even, so the last digit alone decides.
    return (parseInt(digits[digits.length - 1] as string, notation.radix) & 1) as 0 | 1;
  }
  let significantEnd = digits.length;
  while (significantEnd > 0 && digits.charCodeAt(significantEnd - 1) === 48) significantEnd--;
  if (significantEnd === 0) return 0; // zero, -0 included, is even
  // Integrality from the text (docs/behaviour.md §2.2): "1.9999999999999999" is not 2.
  if (significantEnd > notation.pointAt) throw new InputError(NOT_AN_INTEGER);
  if (significantEnd < notation.pointAt) return 0; // a multiple of ten
  return (digits.charCodeAt(significantEnd - 1) & 1) as 0 | 1;
}
