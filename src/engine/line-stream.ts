import { isAscii } from 'node:buffer';
import { answerItem, answerText, count, numbersToRead, numberFieldOf, rootedAt, type ItemAnswer, type Tally } from './items.js';
import type { Limits } from '../operations/field-rules.js';
import { problemOutcome } from './run.js';
import { decodeUtf8Body, parseJsonText, withNumberSources } from './json-text.js';
import { fieldProblem, ProblemError, problemOf } from '../operations/problem.js';
import { LIMIT_TEXTS } from '../operations/limit-texts.js';

/**
 * The NDJSON stream's lines (`POST /api/stream`, routed in http/operations/stream-route.ts): bytes in as they
 * arrive, one answer line out per line in, in order. A line is an item of a batch
 * (items.ts), its own JSON document, so its pointers are rooted at the line. Framework-free:
 * the route, the CLI (`--lines`) and the tests use it alike.
 */

export interface StreamLimits extends Limits {
  readonly maxDepth: number;
  readonly streamMaxLineBytes: number;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const LINE = 'The line';
const ITEM = 'a JSON object with an "operation" field and that operation\'s fields';
/** About how much answer text is handed on at a time, so that one chunk of short lines never makes a large piece. */
const ANSWER_PIECE_CHARS = 64 * 1024;
/**
 * About how long lines are answered before a piece is handed on, however short it is: whoever
 * drives the stream can let other work in between pieces (the HTTP route lets the event loop turn after each).
 */
const ANSWER_PIECE_MS = 2;
/** How many bytes of lines are answered between two looks at the clock: a line's cost grows with its length. */
const CLOCK_EVERY_BYTES = 4 * 1024;

/**
 * Answers one line (without its line break) as its single endpoint would answer the item in it:
 * its bytes, or its text when the chunk it came in was ASCII and read as one string.
 *
 * @example
 * answerLine(Buffer.from('{"operation":"isEven","input":"12"}'), limits) //=> { status: 200, result: { ret: true } }
 */
function answerLine(line: Uint8Array | string, limits: StreamLimits, tally: Tally = {}): ItemAnswer {
  let item: unknown;
  let answer: ItemAnswer;
  try {
    const text =
      typeof line === 'string' ? withoutReturn(line) : decodeUtf8Body(line.subarray(0, line[line.length - 1] === CARRIAGE_RETURN ? -1 : undefined), ITEM);
    const { value, sources } = withNumberSources(
      text,
      parseJsonText(text, limits.maxDepth, typeof line === 'string' ? undefined : line),
      numbersToRead,
      numberFieldOf,
    );
    item = value;
    answer = answerItem(item, sources?.get(item as object), limits);
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    answer = problemOutcome(error.problem);
  }
  count(tally, item, answer.status);
  return 'problem' in answer ? problemOutcome(rootedAt(answer.problem, '', LINE)) : answer;
}

/** A line's text without the carriage return of a CRLF line break, refused as its bytes would be when nothing is left. */
function withoutReturn(line: string): string {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  return text === '' ? decodeUtf8Body(new Uint8Array(0), ITEM) : text;
}

/**
 * Splits a byte stream into lines and answers each. A line longer than `streamMaxLineBytes` is
 * answered 413 as soon as it passes the limit and the rest of it is discarded as it arrives,
 * never held. Memory: at most one line, and the answers of one chunk in pieces.
 *
 * @example
 * const lines = new LineAnswerer(limits);
 * for (const piece of lines.answers(chunk)) response.write(piece);
 * response.end(lines.end());
 */
export class LineAnswerer {
  /** Answers so far, by operation and status. */
  readonly tally: Tally = {};
  /** Lines answered so far. */
  lines = 0;
  private partial: Uint8Array[] = [];
  private partialBytes = 0;
  private skipping = false;

  constructor(private readonly limits: StreamLimits) {}

  /** The answer lines of every line `chunk` completes, in pieces of about `ANSWER_PIECE_CHARS` or `ANSWER_PIECE_MS` of work. */
  *answers(chunk: Uint8Array): Generator<string> {
    const max = this.limits.streamMaxLineBytes;
    // An ASCII chunk is read as one string, each line a slice of it: one decoding a chunk, not one a line.
    const text = isAscii(chunk) ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length).toString('latin1') : undefined;
    let out = '';
    let from = 0;
    let pieceStarted = performance.now();
    let clockAt = 0;
    while (from < chunk.length) {
      const end = chunk.indexOf(NEWLINE, from);
      if (end === -1) {
        if (!this.skipping && this.partialBytes + chunk.length - from > max) out += this.tooLong();
        else if (!this.skipping) this.keep(chunk.subarray(from));
        break;
      }
      if (this.skipping) this.skipping = false;
      else if (this.partialBytes + end - from > max) out += this.tooLong(false);
      else out += this.answer(text !== undefined && this.partialBytes === 0 ? text.slice(from, end) : this.lineOf(chunk.subarray(from, end)));
      from = end + 1;
      if (from - clockAt < CLOCK_EVERY_BYTES && out.length < ANSWER_PIECE_CHARS) continue;
      clockAt = from;
      if (out.length >= ANSWER_PIECE_CHARS || (out !== '' && performance.now() - pieceStarted >= ANSWER_PIECE_MS)) {
        yield out;
        out = '';
        pieceStarted = performance.now();
      }
    }
    if (out !== '') yield out;
  }

  /** The answer to a last line that has no line break after it, or `''`. */
  end(): string {
    if (this.skipping || this.partialBytes === 0) return '';
    return this.answer(this.lineOf(new Uint8Array(0)));
  }

  private keep(bytes: Uint8Array): void {
    // A copy: the chunk's buffer may be reused by whoever read it.
    this.partial.push(Uint8Array.prototype.slice.call(bytes));
    this.partialBytes += bytes.length;
  }

  private lineOf(last: Uint8Array): Uint8Array {
    if (this.partialBytes === 0) return last;
    const line = Buffer.concat([...this.partial, last]);
    this.partial = [];
    this.partialBytes = 0;
    return line;
  }

  private answer(line: Uint8Array | string): string {
    const answer = line.length === 0 ? this.empty() : answerLine(line, this.limits, this.tally);
    this.lines++;
    return `${answerText(answer)}\n`;
  }

  private empty(): ItemAnswer {
    count(this.tally, undefined, 400);
    return problemOutcome(problemOf(400, `${LINE} is empty; each line must be ${ITEM}`));
  }

  /** The 413 line for a line past the limit; the rest of it, `skip`ped, is discarded up to its line break. */
  private tooLong(skip = true): string {
    this.partial = [];
    this.partialBytes = 0;
    this.skipping = skip;
    this.lines++;
    count(this.tally, undefined, 413);
    return `${answerText(problemOutcome(rootedAt(fieldProblem('', LIMIT_TEXTS.streamLine(this.limits.streamMaxLineBytes), 413).problem, '', LINE)))}\n`;
  }
}
