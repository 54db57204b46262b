import { toJsonPointer } from '../core/index.js';
import { fieldProblem, ProblemError } from '../operations/problem.js';
import { LIMIT_TEXTS } from '../operations/limit-texts.js';

/**
 * A request's JSON text, read once for every way of running an operation (engine/run.ts): UTF-8
 * decoded strictly, nesting refused before `JSON.parse` would build it, and the source text of
 * the numbers whose every digit matters.
 */

// The bytes the depth scanner looks at.
const [QUOTE, BACKSLASH, COMMA, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = [0x22, 0x5c, 0x2c, 0x7b, 0x7d, 0x5b, 0x5d] as const;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of a body, refused when it is empty (`expected` says what it should be) or not UTF-8 (RFC 8259 §8.1).
 *
 * @example
 * decodeUtf8Body(Buffer.from('{"input":1}'), 'a JSON object') //=> '{"input":1}'
 */
export function decodeUtf8Body(bytes: Uint8Array, expected: string): string {
  if (bytes.length === 0) throw fieldProblem('', `is empty; it must be ${expected}`);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ProblemError(400, 'The request body is not valid UTF-8');
  }
}

/**
 * `JSON.parse` of a body's text, with nesting beyond `maxDepth` below the body's top level refused
 * from the text first (`bytes`, its UTF-8 when already at hand, is faster to scan), and the parse
 * error as a 400 problem. `undefined` for `maxDepth`: checked already.
 *
 * @example
 * parseJsonText('{"input":[[1]]}', 1) // throws the 413 problem "/input nests deeper than the limit of 1 levels (MAX_DEPTH)"
 */
export function parseJsonText(text: string, maxDepth: number | undefined, bytes?: Uint8Array): unknown {
  // The body object itself is one level above `input`, where the limit is counted (docs/behaviour.md §3).
  // Each level opens with a character: a text no longer than the limit cannot pass it (a stream's short lines).
  if (maxDepth !== undefined && text.length > maxDepth + 1) {
    const [tooDeep] = deepValues(bytes ?? Buffer.from(text, 'utf8'), maxDepth + 1, undefined, true);
    if (tooDeep !== undefined) throw fieldProblem(tooDeep.pointer, LIMIT_TEXTS.depth(maxDepth), 413);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProblemError(400, `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

// A double JSON.parse may have rounded, or whose text it does not tell: not a safe integer, or -0.
// A safe integer read from an integer literal (no fraction, no exponent) is exactly that literal,
// as String() writes it; so only such a number, or a text with a fraction or an exponent, is read again.
const mayBeRounded = (n: number): boolean => !Number.isSafeInteger(n) || Object.is(n, -0);
const FRACTION_OR_EXPONENT = /\d[.eE]/;

/**
 * The number in `holder`'s member `field`, as the list `withNumberSources` takes: none, or one.
 *
 * @example
 * numberIn({ input: 7 }, 'input') //=> [7]; numberIn({ input: '7' }, 'input') //=> []
 */
export function numberIn(holder: unknown, field: string | undefined): number[] {
  const value = field === undefined ? undefined : (holder as Record<string, unknown> | null)?.[field];
  return typeof value === 'number' ? [value] : [];
}

/**
 * The source text of the numbers JSON.parse may have rounded, in the members `fieldOf` names for
 * each object, keyed by that object of the value returned with them: the text is parsed again,
 * with the reviver's source text access (V8 11.4, every Node.js line this runs on), only when one
 * of the numbers that matter (`numbersOf`) may differ from its text.
 *
 * @example
 * withNumberSources('{"input":9007199254740993}', JSON.parse(text), (v) => [v.input], () => 'input') // { value: { input: 9007199254740992 }, sources: Map { value => '9007199254740993' } }
 */
export function withNumberSources<T>(
  text: string,
  value: T,
  numbersOf: (value: T) => readonly number[],
  fieldOf: (holder: object) => string | undefined,
): { value: T; sources: Map<object, string> | undefined } {
  const numbers = numbersOf(value);
  if (numbers.length === 0 || (!numbers.some(mayBeRounded) && !FRACTION_OR_EXPONENT.test(text))) return { value, sources: undefined };
  const sources = new Map<object, string>();
  const reparsed = JSON.parse(text, function (this: object, key: string, member: unknown, context?: { source?: string }) {
    if (typeof member === 'number' && context?.source !== undefined && key === fieldOf(this)) sources.set(this, context.source);
    return member;
  } as (key: string, value: unknown) => unknown) as T;
  return { value: reparsed, sources };
}

/** How many times `byte` is in `bytes`, counting no further than one past `limit` (a native scan). */
function countAtMost(bytes: Buffer, byte: number, limit: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && count <= limit; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}

/** A value of a JSON text that nests deeper than the limit (`deepValues`). */
export interface DeepValue {
  /** Where the value begins, and ends (just past its closing bracket; the text's length when it never closes). */
  readonly start: number;
  readonly end: number;
  /** Its index in the array that `within` names; undefined for any other value. */
  readonly index: number | undefined;
  /** When it is an object: the pointer of its member that nests too deep; else `''`. */
  readonly pointer: string;
}

/**
 * The values of a JSON text that nest deeper than `limit` (counted from the top): the top-level
 * value, or with `within` (a quoted key, `"operations"`) each item of the array in that top-level
 * member and each other top-level member's value; `first` stops at the first. Works on any bytes,
 * valid JSON or not; brackets inside strings do not count, nor does a byte of a multi-byte
 * character, which is never one of these ASCII characters. The one depth scanner of a single body
 * (parseJsonText) and of a batch, whose too-deep items are each answered in their place.
 *
 * @example
 * deepValues(Buffer.from('{"a":1,"b":[[2]]}'), 2)[0]?.pointer //=> '/b'
 */
export function deepValues(bytes: Uint8Array, limit: number, within?: Uint8Array, first = false): DeepValue[] {
  const found: DeepValue[] = [];
  // Each level takes a byte: a text no longer than the limit cannot pass it.
  if (bytes.length <= limit) return found;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  // Fewer openers than the limit cannot nest past it: one native scan decides most bodies.
  if (countAtMost(buffer, OPEN_BRACKET, limit) + countAtMost(buffer, OPEN_BRACE, limit) <= limit) return found;
  let depth = 0;
  let inWithin = false; // inside the value of the top-level member `within`
  let index = 0; // the item of that array being read
  let start = -1; // where the value being read began
  let isObject = false;
  let pointer: string | undefined; // set once the value being read nests too deep
  let expectKey = false; // the next string is a key of the value being read
  let key: [number, number] = [-1, -1]; // the member of that value being read
  const valueDepth = (): number => (within === undefined ? 1 : inWithin ? 3 : 2);
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const from = i;
      for (i++; i < bytes.length && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      if (within !== undefined && depth === 1) inWithin = buffer.compare(within, 0, within.length, from, i + 1) === 0;
      else if (expectKey) [key, expectKey] = [[from, i + 1], false];
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth === valueDepth()) [start, pointer, key, isObject, expectKey] = [i, undefined, [-1, -1], c === OPEN_BRACE, c === OPEN_BRACE];
      if (depth > limit && pointer === undefined && start >= 0) {
        pointer = key[0] < 0 ? '' : pointerOfKey(buffer.toString('utf8', key[0], key[1]));
        if (first) return [{ start, end: bytes.length, index: inWithin ? index : undefined, pointer }];
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (pointer !== undefined && depth === valueDepth()) {
        found.push({ start, end: i + 1, index: inWithin ? index : undefined, pointer });
        pointer = undefined;
      }
      depth--;
    } else if (c === COMMA) {
      if (inWithin && depth === 2) index++;
      else if (isObject && depth === valueDepth()) expectKey = true;
    }
  }
  if (pointer !== undefined) found.push({ start, end: bytes.length, index: inWithin ? index : undefined, pointer });
  return found;
}

/**
 * The JSON Pointer of a member from its quoted key as written; `''` when it is not a string.
 *
 * @example
 * pointerOfKey('"a/b"') //=> '/a~1b'
 */
function pointerOfKey(quotedKey: string): string {
  try {
    return toJsonPointer([JSON.parse(quotedKey) as string]);
  } catch {
    return '';
  }
}
