import type { JsonPath } from './json.js';

/** The core's error texts, each written once; the HTTP layer puts a JSON Pointer in front of them. */
export const CORE_ERRORS = {
  beyondDouble: 'is a number beyond the range of a double',
  noCanonicalForm: 'is a number beyond the range of a double, which has no canonical form',
  notJsonValue: (type: string) => `is not a JSON value (${type})`,
  loneSurrogate: 'contains a lone surrogate, which RFC 8785 (I-JSON, RFC 7493 §2.1) does not allow',
} as const;

/**
 * Thrown by the core operations when a value is outside what the operation accepts.
 * `path` locates the offending part inside the argument (`[]` is the argument itself).
 *
 * @example
 * try { isEven('2.5') } catch (e) { if (e instanceof InputError) e.message } //=> 'must be an integer'
 */
export class InputError extends Error {
  readonly path: JsonPath;

  constructor(message: string, path: JsonPath = []) {
    super(message);
    this.name = 'InputError';
    this.path = path;
  }
}

/**
 * An `InputError` for a value that is well formed but larger than a limit the caller set (a
 * service answers it with 413 rather than 400).
 *
 * @example
 * try { stringSplit('a,b,c', ',', { maxParts: 2 }) } catch (e) { e instanceof LimitError } //=> true
 */
export class LimitError extends InputError {
  constructor(message: string, path: JsonPath = []) {
    super(message, path);
    this.name = 'LimitError';
  }
}

/**
 * The JSON Pointer (RFC 6901) of `path` below `base`; `~` is written `~0` and `/` is written `~1`.
 *
 * @example
 * toJsonPointer(['a/b', 0], '/input') //=> '/input/a~1b/0'
 */
export function toJsonPointer(path: JsonPath, base = ''): string {
  let pointer = base;
  for (const token of path) pointer += '/' + String(token).replaceAll('~', '~0').replaceAll('/', '~1');
  return pointer;
}
