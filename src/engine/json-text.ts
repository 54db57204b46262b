import { toJsonPointer } from '../core/index.js';
import { fieldProblem, ProblemError } from '../operations/problem.js';
import { LIMIT_TEXTS } from '../operations/limit-texts.js';

/**
 * A request's JSON text, read once for every way of running an operation (engine/run.ts): UTF-8
 * decoded strictly, nesting refused before `JSON.parse` would build it, and the source text of
 * the numbers whose every digit matters.
 */

/** The bytes a JSON scanner looks at (the batch's, engine/batch.ts, too). */
export const BYTE = { QUOTE: 0x22, BACKSLASH: 0x5c, COMMA: 0x2c, OPEN_BRACE: 0x7b, CLOSE_BRACE: 0x7d, OPEN_BRACKET: 0x5b, CLOSE_BRACKET: 0x5d } as const;
const { QUOTE, BACKSLASH, COMMA, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET } = BYTE;

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
    const tooDeep = findDepthViolation(bytes ?? Buffer.from(text, 'utf8'), maxDepth + 1);
    if (tooDeep !== undefined) throw fieldProblem(tooDeep, LIMIT_TEXTS.depth(maxDepth), 413);
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

/**
 * How many times `byte` is in `bytes`, counting no further than one past `limit` (a native scan).
 *
 * @example
 * countAtMost(Buffer.from('[[[1]]]'), BYTE.OPEN_BRACKET, 1) //=> 2
 */
export function countAtMost(bytes: Buffer, byte: number, limit: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && count <= limit; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}

/**
 * The pointer of the top-level member in which a JSON text nests deeper than `limit`, or
 * undefined; `''` when the top level is not an object. Works on any bytes, valid JSON or not;
 * brackets inside strings do not count, nor does a byte of a multi-byte character, which is never
 * one of these ASCII characters.
 *
 * @example
 * findDepthViolation(Buffer.from('{"a":1,"b":[[2]]}'), 2) //=> '/b'
 */
export function findDepthViolation(bytes: Uint8Array, limit: number): string | undefined {
  // Each level takes a byte: a text no longer than the limit cannot pass it (a stream's short lines).
  if (bytes.length <= limit) return undefined;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  // Fewer openers than the limit cannot nest past it: one native scan decides most bodies.
  if (countAtMost(buffer, OPEN_BRACKET, limit) + countAtMost(buffer, OPEN_BRACE, limit) <= limit) return undefined;
  let depth = 0;
  let topIsObject = false;
  let expectKey = false;
  let keyStart = -1;
  let keyEnd = -1;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const start = i;
      for (i++; i < bytes.length && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      if (expectKey) [keyStart, keyEnd, expectKey] = [start, i, false];
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > limit) return topIsObject && keyStart >= 0 ? pointerOfKey(buffer.toString('utf8', keyStart, keyEnd + 1)) : '';
      if (depth === 1) expectKey = topIsObject = c === OPEN_BRACE;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COMMA && depth === 1 && topIsObject) {
      expectKey = true;
    }
  }
  return undefined;
}

/**
 * The JSON Pointer of a member from its quoted key as written; `''` when it is not a string.
 *
 * @example
 * pointerOfKey('"a/b"') //=> '/a~1b'
 */
export function pointerOfKey(quotedKey: string): string {
  try {
    return toJsonPointer([JSON.parse(quotedKey) as string]);
  } catch {
    return '';
  }
}
