import type { JsonPath } from './json.js';

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
