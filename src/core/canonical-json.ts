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
  return viaStringify(value, loneSurrogates) ?? write(value, [], loneSurrogates);
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
  return viaStringify(value, loneSurrogates) ?? write(value, [...path], loneSurrogates);
}

/** What `sortedCopy` gives for a value that needs `write`: an error to name, or an order JSON.stringify would not keep. */
const NEEDS_WRITE = Symbol('needs write');

// JSON.stringify escapes a lone surrogate as \udXXX; the text \udXXX in a string comes out as \\udXXX,
// which this also matches, and `write` then answers it (rarely, and correctly).
const ESCAPED_SURROGATE = /\\ud[89a-f]/;

/**
 * The canonical text by native `JSON.stringify` of a copy whose objects have their keys in
 * canonical order, which is what JSON.stringify writes them in, unless a key is an array index
 * (JSON.stringify writes those first, in numeric order); strings and numbers it writes as RFC 8785
 * asks. Undefined for whatever `write` must answer: a key that could be an index, `__proto__`, a
 * value that is not JSON, a lone surrogate to refuse. Native code writes the text, where `write`
 * joins strings; `write` stays the definition (the tests compare the two).
 */
function viaStringify(value: unknown, loneSurrogates: LoneSurrogates): string | undefined {
  const sorted = sortedCopy(value);
  if (sorted === NEEDS_WRITE) return undefined;
  const text = JSON.stringify(sorted);
  return loneSurrogates === 'reject' && ESCAPED_SURROGATE.test(text) ? undefined : text;
}

/** `value` with every object's keys inserted in canonical order; what needs no change is reused. */
function sortedCopy(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : NEEDS_WRITE;
    case 'object': {
      if (value === null) return null;
      // An own or inherited toJSON would change what JSON.stringify writes.
      if ((value as { toJSON?: unknown }).toJSON !== undefined) return NEEDS_WRITE;
      if (Array.isArray(value)) {
        let copy: unknown[] | undefined;
        for (let i = 0; i < value.length; i++) {
          const element: unknown = value[i];
          const sorted = sortedCopy(element);
          if (sorted === NEEDS_WRITE) return NEEDS_WRITE;
          if (copy === undefined && sorted !== element) copy = value.slice(0, i);
          copy?.push(sorted);
        }
        return copy ?? value;
      }
      const keys = Object.keys(value);
      // An object from JSON.parse whose keys are in order already is written as it is.
      let copy = sortInPlace(keys) && Object.getPrototypeOf(value) === Object.prototype ? undefined : ({} as Record<string, unknown>);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const first = key.charCodeAt(0);
        if ((first >= 0x30 && first <= 0x39) || key === '__proto__') return NEEDS_WRITE;
        const member = (value as Record<string, unknown>)[key];
        const sorted = sortedCopy(member);
        if (sorted === NEEDS_WRITE) return NEEDS_WRITE;
        if (copy === undefined && sorted !== member) copy = copyOf(value, keys, i);
        if (copy !== undefined) copy[key] = sorted;
      }
      return copy ?? value;
    }
    default:
      return NEEDS_WRITE;
  }
}

/** The first `count` members of `value`, by `keys`. */
function copyOf(value: object, keys: readonly string[], count: number): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) copy[keys[i] as string] = (value as Record<string, unknown>)[keys[i] as string];
  return copy;
}

/**
 * Sorts keys in UTF-16 code-unit order (RFC 8785 §3.2.3); true if they were in order already.
 * Objects have few keys: an insertion sort with `<`, which compares code units, is twice as fast
 * as the default sort's string conversions there; many keys keep the default sort's O(n log n).
 */
function sortInPlace(keys: string[]): boolean {
  let inOrder = true;
  for (let i = 1; i < keys.length; i++) if ((keys[i - 1] as string) > (keys[i] as string)) inOrder = false;
  if (inOrder) return true;
  if (keys.length > 16) {
    keys.sort();
    return false;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return false;
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
      // takes several times the memory of the joined text (docs/operations.md, Reliability: peak memory).
      if (Array.isArray(value)) {
        const parts = new Array<string>(value.length);
        for (let i = 0; i < value.length; i++) {
          path.push(i);
          parts[i] = write(value[i], path, loneSurrogates);
          path.pop();
        }
        return `[${parts.join(',')}]`;
      }
      const keys = Object.keys(value);
      sortInPlace(keys);
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
