import { splitGraphemes } from './graphemes.js';

/**
 * Splits `string` by a literal `separator` (never a regular expression), as
 * `string.split(separator)` does. With no separator the result is `[string]`; with `''` it is the
 * string's user-perceived characters (extended grapheme clusters), so no emoji or accented
 * letter is ever cut apart.
 *
 * @example
 * stringSplit('a,b,,c', ',')  //=> ['a', 'b', '', 'c']
 * stringSplit('a.b', '.')     //=> ['a', 'b']
 * stringSplit('👍🏽é', '')     //=> ['👍🏽', 'é']
 * stringSplit('', '')         //=> []
 * stringSplit('abc')          //=> ['abc']
 */
export function stringSplit(string: string, separator?: string): string[] {
  if (separator === undefined) return [string];
  if (separator === '') return splitGraphemes(string);
  return string.split(separator);
}
