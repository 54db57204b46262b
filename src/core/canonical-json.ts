import { CORE_ERRORS, InputError } from './errors.js';

/**
 * How a lone surrogate inside a string is treated: RFC 8785 §3.1 requires I-JSON input (RFC 7493
 * §2.1 forbids lone surrogates), so canonicalization rejects them; ordering only needs a stable
 * text, so it escapes them as `JSON.stringify` does.
 */
export type LoneSurrogates = 'reject' | 'escape';

/**
 * The RFC 8785 (JCS) canonical text of a JSON value: no whitespace, object keys sorted by UTF-16
 * code units, numbers in ECMAScript shortest round-trip form, strings escaped as ECMAScript's
 * `JSON.stringify` does.
 *
 * @example
 * canonicalJson({ b: [1.0, 1e21], a: '\u20ac' }) //=> '{"a":"€","b":[1,1e+21]}'
 */
export function canonicalJson(value: unknown, loneSurrogates: LoneSurrogates = 'reject'): string {
  return write(value, [], loneSurrogates);
}

/**
 * `canonicalJson` of a value found at `path` inside an argument, so that an error names where it
 * is; sort orders objects by this text and checks arrays with it (one walk of JSON for both).
 * An ordering text (`'escape'`) refuses a number beyond a double without speaking of canonical form.
 *
 * @example
 * canonicalTextAt([1, { a: 2 }], [3], 'escape') //=> '[1,{"a":2}]'
 */
export function canonicalTextAt(value: unknown, path: Array<string | number>, loneSurrogates: LoneSurrogates): string {
  return write(value, [...path], loneSurrogates);
}

function write(value: unknown, path: Array<string | number>, loneSurrogates: LoneSurrogates): string {
  switch (typeof value) {
    case 'string':
      return writeString(value, path, loneSurrogates);
    case 'number':
      if (!Number.isFinite(value)) {
        throw new InputError(loneSurrogates === 'reject' ? CORE_ERRORS.noCanonicalForm : CORE_ERRORS.beyondDouble, [...path]);
      }
      // Number::toString is the serialization RFC 8785 §3.2.2.3 prescribes; it writes -0 as "0".
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      // Parts joined once: appending to one string builds a rope of two nodes per element, which
      // takes several times the memory of the joined text (README, Reliability: peak memory).
      if (Array.isArray(value)) {
        const parts = new Array<string>(value.length);
        for (let i = 0; i < value.length; i++) {
          path.push(i);
          parts[i] = write(value[i], path, loneSurrogates);
          path.pop();
        }
        return `[${parts.join(',')}]`;
      }
      // Default sort compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
      const keys = Object.keys(value).sort();
      const parts = new Array<string>(keys.length);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        path.push(key);
        parts[i] = `${writeString(key, path, loneSurrogates)}:${write((value as Record<string, unknown>)[key], path, loneSurrogates)}`;
        path.pop();
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new InputError(CORE_ERRORS.notJsonValue(typeof value), [...path]);
  }
}

// What JSON.stringify escapes (controls, quote, backslash) and every surrogate, paired or not.
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const ESCAPED_OR_SURROGATE = /[\u0000-\u001f"\\\ud800-\udfff]/;

function writeString(text: string, path: Array<string | number>, loneSurrogates: LoneSurrogates): string {
  // Most keys and values have none of these: quoted as they are, they are what JSON.stringify
  // writes, and well formed, without JSON.stringify's scan (npm run bench's S5 is where it shows).
  if (!ESCAPED_OR_SURROGATE.test(text)) return `"${text}"`;
  if (loneSurrogates === 'reject' && !text.isWellFormed()) {
    throw new InputError(CORE_ERRORS.loneSurrogate, [...path]);
  }
  return JSON.stringify(text);
}
