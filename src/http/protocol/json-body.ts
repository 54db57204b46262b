import type { FastifyBodyParser } from 'fastify';
import { toJsonPointer } from '../../core/index.js';
import { OPERATIONS } from '../operations/operation-table.js';
import { ProblemError, fieldProblem } from '../problem.js';
import { LIMIT_TEXTS } from '../limit-texts.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON source text of the number in the body field named by the route's `numberField`. */
    numberSource: string | undefined;
    /** The body's size in bytes, once it has arrived. */
    bodyBytes: number;
  }
}

/**
 * A body too large to parse on the event loop: its bytes go to the worker threads, which parse,
 * validate and answer it (memory/admission.ts).
 */
export class LargeBody {
  constructor(readonly bytes: Buffer) {}
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The media type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const UTF8_CHARSET = /^\s*"?utf-?8"?\s*$/i;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A parsed body, and the source text of its number field when the route asked for one. */
export interface ParsedBody {
  body: unknown;
  numberSource: string | undefined;
}

/** Refuses a `charset` other than UTF-8 (RFC 8259 §8.1) with 415. */
function checkCharset(contentType: string | undefined): void {
  const charset = /;\s*charset\s*=([^;]*)/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !UTF8_CHARSET.test(charset)) {
    throw new ProblemError(415, `The request body must be UTF-8 JSON; charset ${charset.trim()} is not accepted`);
  }
}

/**
 * Parses a request body (the bytes of a JSON text), free of any framework so that it runs the
 * same on the event loop and in the worker threads:
 * - nesting beyond `maxDepth` is refused from the text, before `JSON.parse` builds it (a 16 MiB
 *   body of `[` would otherwise take seconds and hundreds of MB);
 * - `__proto__` and `constructor` are ordinary keys (docs/behaviour.md): `JSON.parse` makes them own
 *   data properties and never touches a prototype;
 * - with `numberField`, the source text of that member's number is kept (parity is exact);
 * - a body that is not valid UTF-8 (RFC 8259 §8.1) is refused instead of silently repaired.
 */
export function parseJsonBody(bytes: Uint8Array, maxDepth: number, numberField: string | undefined): ParsedBody {
  const text = decodeUtf8Body(bytes, 'a JSON object with an "input" field');
  const body = parseJsonText(text, maxDepth, bytes);
  const numberSource = numberField !== undefined && isObject(body) && typeof body[numberField] === 'number' ? memberSourceText(text, numberField) : undefined;
  return { body, numberSource };
}

/** The text of a body, refused when it is empty (`expected` says what it should be) or not UTF-8. */
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
 * from the text first (undefined: checked already) (`bytes`, its UTF-8, when already at hand, is faster to scan), and the parse
 * error as a 400 problem.
 *
 * @example
 * parseJsonText('{"input":[[1]]}', 1) // throws the 413 problem "/input nests deeper than the limit of 1 levels (MAX_DEPTH)"
 */
export function parseJsonText(text: string, maxDepth: number | undefined, bytes?: Uint8Array): unknown {
  // The body object itself is one level above `input`, where the limit is counted (docs/behaviour.md §3).
  const tooDeep = maxDepth === undefined ? undefined : findDepthViolation(text, bytes, maxDepth + 1);
  if (tooDeep !== undefined && maxDepth !== undefined) {
    throw fieldProblem(tooDeep, LIMIT_TEXTS.depth(maxDepth), 413);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProblemError(400, `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Fastify's `application/json` parser, in the callback form (an async parser costs a promise per
 * request). It keeps the source text of the number field of the route's operation, and hands a
 * body of an operation over `offloadBodyBytes` on unparsed, as a `LargeBody` for the worker threads.
 *
 * @example
 * app.addContentTypeParser('application/json', { parseAs: 'buffer' }, jsonBodyParser(64, 65536));
 */
export function jsonBodyParser(maxDepth: number, offloadBodyBytes: number): FastifyBodyParser<Buffer> {
  return (request, bytes, done) => {
    let body: unknown;
    try {
      checkCharset(request.headers['content-type']);
      request.bodyBytes = bytes.length;
      const operation = request.routeOptions.config.operation;
      if (operation !== undefined && bytes.length > offloadBodyBytes) return done(null, new LargeBody(bytes));
      if (operation === 'batch') return done(null, bytes); // answered from its bytes (operations/batch.ts)
      const parsed = parseJsonBody(bytes, maxDepth, operation === undefined || operation === 'stream' ? undefined : OPERATIONS[operation].numberField);
      request.numberSource = parsed.numberSource;
      body = parsed.body;
    } catch (error) {
      return done(error as Error, undefined);
    }
    done(null, body);
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Index of the quote that closes the string opening at `start`. */
function endOfString(text: string, start: number): number {
  let end = start + 1;
  for (;;) {
    end = text.indexOf('"', end);
    if (end === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end++;
  }
}

function countAtMost(text: string, char: string, limit: number): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1 && count <= limit; at = text.indexOf(char, at + 1)) count++;
  return count;
}

/**
 * The pointer of the top-level member in which the body nests deeper than `limit`, or undefined.
 * Works on any text, valid JSON or not; brackets inside strings do not count. It reads the UTF-8
 * bytes, not the decoded text: a byte of a multi-byte character is never one of these ASCII
 * characters, and bytes read twice as fast as a two-byte string's code units (S5 of `npm run bench`).
 */
function findDepthViolation(text: string, utf8Bytes: Uint8Array | undefined, limit: number): string | undefined {
  // Fewer openers than the limit cannot nest past it: one native scan decides most bodies.
  if (countAtMost(text, '[', limit) + countAtMost(text, '{', limit) <= limit) return undefined;
  const bytes = utf8Bytes ?? Buffer.from(text, 'utf8');

  let depth = 0;
  let topIsObject = false;
  let expectKey = false;
  let keyStart = -1;
  let keyEnd = -1;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const start = i;
      for (i++; i < bytes.length; i++) {
        const d = bytes[i];
        if (d === QUOTE) break;
        if (d === BACKSLASH) i++;
      }
      if (expectKey) [keyStart, keyEnd, expectKey] = [start, i, false];
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth > limit)
        return topIsObject && keyStart >= 0
          ? pointerOfKey(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8', keyStart, keyEnd + 1))
          : '';
      if (depth === 1) expectKey = topIsObject = c === OPEN_BRACE;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COMMA && depth === 1 && topIsObject) {
      expectKey = true;
    }
  }
  return undefined;
}

/** The JSON Pointer of a top-level member from its quoted key as written (`"a/b"` → `/a~1b`); `''` when it is not a string. */
export function pointerOfKey(quotedKey: string): string {
  try {
    return toJsonPointer([JSON.parse(quotedKey) as string]);
  } catch {
    return '';
  }
}

const isJsonSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, at: number): number {
  while (isJsonSpace(text.charCodeAt(at))) at++;
  return at;
}

function endOfValue(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return endOfString(text, start) + 1;
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) i = endOfString(text, i);
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return text.length;
  }
  let end = start;
  while (end < text.length) {
    const c = text.charCodeAt(end);
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isJsonSpace(c)) break;
    end++;
  }
  return end;
}

/**
 * The source text of member `key` of the top-level object in `text`, which must be valid JSON.
 * The last of duplicate keys wins, as in `JSON.parse`.
 */
export function memberSourceText(text: string, key: string): string | undefined {
  let found: string | undefined;
  let at = skipSpace(text, 0) + 1; // past "{"
  for (;;) {
    at = skipSpace(text, at);
    if (text.charCodeAt(at) !== QUOTE) return found; // "}" of an empty object
    const keyEnd = endOfString(text, at);
    const quotedKey = text.slice(at, keyEnd + 1);
    const name = quotedKey.includes('\\') ? (JSON.parse(quotedKey) as string) : quotedKey.slice(1, -1);
    const valueStart = skipSpace(text, skipSpace(text, keyEnd + 1) + 1); // past ":"
    const valueEnd = endOfValue(text, valueStart);
    if (name === key) found = text.slice(valueStart, valueEnd);
    at = skipSpace(text, valueEnd);
    if (text.charCodeAt(at) !== COMMA) return found;
    at++;
  }
}
