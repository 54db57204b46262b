import type { OperationId } from '../src/operations/index.js';

/**
 * Request bodies of a given size that cost each operation the most memory per byte: many small
 * elements (the sort and split limits allow a million), small objects, long strings. Used to
 * measure the peak factors of the operations' declared `memory` (src/operations) and to test them.
 */

// The default SORT_MAX_LENGTH and STRING_SPLIT_MAX_PARTS: sort and split bodies with more are refused early.
const MAX_ELEMENTS = 1_000_000;

/** Elements `element(i)` joined by commas, about `bytes` characters in all, at most `most` of them. */
function list(bytes: number, element: (i: number) => string, most = MAX_ELEMENTS): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes && parts.length < most; i++) {
    const text = element(i);
    parts.push(text);
    length += text.length + 1;
  }
  return parts.join(',');
}

const padded = (bytes: number, minimum: number) => Math.max(minimum, Math.ceil(bytes / MAX_ELEMENTS) - 1);
const digits = (i: number, width: number) => String((i * 7919) % 10 ** Math.min(width, 15)).padStart(width, '1');

/** The JSON members of `input`-like values per shape; `bytes` is the body size wanted. */
const SHAPES: Record<string, (bytes: number) => string> = {
  numbers: (bytes) => `[${list(bytes, (i) => digits(i, padded(bytes, 1)))}]`,
  doubles: (bytes) => `[${list(bytes, (i) => `${digits(i, 8)}.${digits(i, padded(bytes, 9) - 9)}`)}]`,
  strings: (bytes) => `[${list(bytes, (i) => JSON.stringify(digits(i, padded(bytes, 3) - 2)))}]`,
  objects: (bytes) => `[${list(bytes, (i) => `{"k":${i % 10},"v":[${i % 3},null]}`)}]`,
  mixed: (bytes) => `[${list(bytes, (i) => ['1', '"s"', 'null', '[1]', '{"a":1}', 'true'][i % 6] as string)}]`,
  ascii: (bytes) => JSON.stringify('abcdefghij'.repeat(Math.ceil(bytes / 10)).slice(0, Math.min(bytes, MAX_ELEMENTS))),
  emoji: (bytes) => JSON.stringify('👍🏽'.repeat(Math.min(Math.ceil(bytes / 8), MAX_ELEMENTS))),
  commas: (bytes) => JSON.stringify('a,'.repeat(Math.min(Math.ceil(bytes / 2), MAX_ELEMENTS - 1)) + 'a'),
  zeros: (bytes) => `[${list(bytes, () => '0', Infinity)}]`,
  smallObjects: (bytes) => `[${list(bytes, (i) => `{"k":${i % 10}}`, Infinity)}]`,
  // Keys out of canonical order: toString writes a sorted copy of each object.
  unsortedObjects: (bytes) => `[${list(bytes, (i) => `{"v":${i % 10},"k":0}`, Infinity)}]`,
  padding: (bytes) => `2,"padding":[${list(bytes, () => '0', Infinity)}]`,
  longString: (bytes) => JSON.stringify('7'.repeat(bytes)),
};

/** The shapes that matter for each operation (the others only parse and drop the body); an operation not listed is measured on every shape. */
const COSTLIEST: Readonly<Partial<Record<OperationId, readonly string[]>>> = {
  sort: ['numbers', 'doubles', 'strings', 'objects', 'mixed'],
  toString: ['zeros', 'smallObjects', 'unsortedObjects', 'strings'],
  stringSplit: ['ascii', 'emoji', 'commas'],
  isNumber: ['padding', 'longString'],
  isEven: ['padding'],
  isOdd: ['padding'],
  legacySort: ['numbers'],
  legacyIsOdd: ['padding'],
  legacyIsEven: ['padding'],
  legacyToString: ['zeros'],
};

/**
 * The shapes to measure `operation` on.
 *
 * @example
 * shapesOf('stringSplit') //=> ['ascii', 'emoji', 'commas']
 */
export const shapesOf = (operation: OperationId): readonly string[] => COSTLIEST[operation] ?? Object.keys(SHAPES);

const FIELD: Readonly<Record<string, string>> = { legacySort: 'array', legacyIsOdd: 'number', legacyIsEven: 'number', legacyToString: 'number' };

/** A whole body for `operation` of about `bytes` bytes (never more than the shape allows). */
export function bodyOfShape(operation: OperationId, shape: string, bytes: number): Uint8Array {
  const value = (SHAPES[shape] as (bytes: number) => string)(bytes);
  const field = (Object.hasOwn(FIELD, operation) ? FIELD[operation as string] : undefined) ?? 'input';
  const text = operation === 'stringSplit' ? `{"input":{"string":${value},"seperator":${shape === 'commas' ? '","' : '""'}}}` : `{"${field}":${value}}`;
  return new TextEncoder().encode(text);
}
