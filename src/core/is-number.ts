import { parseNumericText } from './numeric-text.js';

/**
 * Tells whether `value` is a number: a JSON number, or a string that, once trimmed, is written
 * in JavaScript's numeric notation (decimal with optional sign, fraction and exponent, or an
 * unsigned `0x`/`0o`/`0b` integer). Decided on the notation, so any magnitude counts.
 * `Infinity` stands for a JSON literal too large for a double (`1e400`) and counts; `NaN` does not.
 *
 * @example
 * isNumber(12)         //=> true
 * isNumber(' -1.5e3 ') //=> true
 * isNumber('0x1F')     //=> true
 * isNumber('1e400')    //=> true
 * isNumber('12px')     //=> false
 * isNumber('Infinity') //=> false
 * isNumber(null)       //=> false
 */
export function isNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isNaN(value);
  if (typeof value === 'bigint') return true;
  if (typeof value === 'string') return parseNumericText(value.trim()) !== undefined;
  return false;
}
