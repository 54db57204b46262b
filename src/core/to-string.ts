import { canonicalJson } from './canonical-json.js';
import type { JsonValue } from './json.js';

/**
 * The string form of a JSON value: a string unchanged, anything else its RFC 8785 canonical text.
 * Throws `InputError` for a number beyond the range of a double or a lone surrogate below the top.
 *
 * @example
 * toString('héllo')              //=> 'héllo'
 * toString(1e21)                 //=> '1e+21'
 * toString({ b: 2, a: [true] })  //=> '{"a":[true],"b":2}'
 */
export function toString(value: JsonValue): string {
  return typeof value === 'string' ? value : canonicalJson(value);
}
