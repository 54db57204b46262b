import { isEven, isOdd, sort, toString, type JsonValue, type SortOptions } from '../core/index.js';
import type { Config } from '../config.js';
import { fieldProblem, fromCore } from './problem.js';
import { LIMIT_TEXTS } from './limit-texts.js';

/**
 * Each core rule applied to one field of a request body, shared by the current and the legacy
 * operations, which differ only in field names (`pointer`) and response shape: the field's limit
 * first, then the rule, its errors as problems at the field's JSON Pointer.
 */

export type Limits = Pick<Config, 'sortMaxLength' | 'numberTextLimit' | 'stringSplitMaxParts'>;

export const PARITY = { isEven, isOdd } as const;
export type ParityName = keyof typeof PARITY;

export function sortedOrProblem(values: unknown[], pointer: string, limits: Limits, options: SortOptions = {}): JsonValue[] {
  if (values.length > limits.sortMaxLength) {
    throw fieldProblem(pointer, LIMIT_TEXTS.sortLength(values.length, limits.sortMaxLength), 413);
  }
  return fromCore(pointer, () => sort(values as JsonValue[], options));
}

/** Why `text` is too long to be a number for parity, or undefined when it is not. */
export function numberTextTooLong(text: string, limits: Limits): string | undefined {
  return text.length > limits.numberTextLimit ? LIMIT_TEXTS.numberText(text.length, limits.numberTextLimit) : undefined;
}

/**
 * Parity of a body field: `source` is the field's JSON text when it was a number, so that no
 * digit is lost to a double (docs/behaviour.md §2.2).
 */
export function parityOrProblem(name: ParityName, value: number | string, source: string | undefined, pointer: string, limits: Limits): boolean {
  const text = typeof value === 'string' ? value : (source ?? String(value));
  const tooLong = numberTextTooLong(text, limits);
  if (tooLong !== undefined) throw fieldProblem(pointer, tooLong);
  return fromCore(pointer, () => PARITY[name](text));
}

export function stringFormOrProblem(value: unknown, pointer: string): string {
  return fromCore(pointer, () => toString(value as JsonValue));
}
