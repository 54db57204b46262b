import { LimitError } from './errors.js';
import { splitGraphemes, DEFAULT_WINDOW } from './graphemes.js';

export interface StringSplitOptions {
  /** Most parts the result may have; more throws `LimitError` before the rest are made. */
  readonly maxParts?: number;
}

/**
 * Splits `string` by a literal `separator` (never a regular expression), as
 * `string.split(separator)` does. With no separator the result is `[string]`; with `''` it is the
 * string's user-perceived characters (extended grapheme clusters), so no emoji or accented
 * letter is ever cut apart. With `maxParts`, a string that would split into more parts throws
 * `LimitError`, having made at most `maxParts + 1` of them.
 *
 * @example
 * stringSplit('a,b,,c', ',')  //=> ['a', 'b', '', 'c']
 * stringSplit('a.b', '.')     //=> ['a', 'b']
 * stringSplit('👍🏽é', '')     //=> ['👍🏽', 'é']
 * stringSplit('', '')         //=> []
 * stringSplit('abc')          //=> ['abc']
 * stringSplit('a,b,c', ',', { maxParts: 2 }) // throws LimitError: splits into more than 2 parts
 */
export function stringSplit(string: string, separator?: string, options: StringSplitOptions = {}): string[] {
  const maxParts = options.maxParts ?? Infinity;
  if (separator === undefined) return [string];
  const parts = separator === '' ? splitGraphemes(string, DEFAULT_WINDOW, maxParts) : string.split(separator, maxParts === Infinity ? undefined : maxParts + 1);
  if (parts.length > maxParts) throw new LimitError(`splits into more than ${maxParts} parts`);
  return parts;
}
