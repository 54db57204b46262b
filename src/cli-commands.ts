import { readFileSync } from 'node:fs';
import { InputError, type JsonValue } from './core/index.js';
import { CURRENT_OPERATION_IDS, OPERATIONS, servedAt, type CurrentOperationId, type Operation } from './operations/index.js';
import type { Problem } from './operations/problem.js';

/** A command line the `json-utility` command cannot run: exit code 2, the problem and the command's usage line. */
export class UsageError extends Error {}

/** Standard input as the value: an empty one (nothing but a final line break, if that) is refused as empty. */
function readStdin(): string {
  const text = readFileSync(0, 'utf8');
  if (/^\r?\n?$/.test(text)) throw new InputError('is empty: give the value as an argument or on standard input');
  return text;
}

function readJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (error) {
    throw new InputError(`is not valid JSON: ${(error as Error).message}`);
  }
}

function argumentOrStdin(positionals: string[]): string {
  if (positionals[0] !== undefined) return positionals[0];
  if (process.stdin.isTTY) throw new UsageError('missing the value: give it as an argument or on standard input');
  return readStdin();
}

/** The value argument, or standard input without its final line break. */
function valueOrStdin(positionals: string[], what: string): string {
  if (positionals[0] !== undefined) return positionals[0];
  if (process.stdin.isTTY) throw new UsageError(`missing ${what}: give it as an argument or on standard input`);
  return readStdin().replace(/\r?\n$/, '');
}

function required(positionals: string[], what: string): string {
  const value = positionals[0];
  if (value === undefined) throw new UsageError(`missing ${what}`);
  return value;
}

type Flags = Record<string, string | boolean | undefined>;

/**
 * An operation as a command: its arguments, its lines of help, the operation's body it makes of
 * the command line, and its stream line for `--lines`. The operation itself is run by the engine
 * (engine/run.ts), as the service runs it.
 */
export interface CommandForm {
  readonly usage: string;
  readonly help: readonly string[];
  /** The body of the operation's single endpoint, from the arguments (or standard input) and the options. */
  readonly body: (positionals: string[], flags: Flags) => object;
  /** With `--lines`: the stream line (an item, as `POST /api/stream` takes it) for one line of standard input. */
  readonly item: (line: string, positionals: string[], flags: Flags) => string;
  /** What a field of the body is called on the command line, where it is not the value argument. */
  readonly fields?: Readonly<Record<string, string>>;
  /** Where the value argument goes in the body, as a JSON Pointer: `/input` unless it is the whole body (''). */
  readonly valueAt?: string;
}

function sortOptions(flags: Flags): object {
  return { order: flags.desc === true ? 'desc' : 'asc', ...(typeof flags.locale === 'string' ? { locale: flags.locale } : {}) };
}

/** The item for a line that is a value of the command's kind: numbers and text as strings. */
const textItem = (operation: string) => (line: string) => JSON.stringify({ operation, input: line });

/** The item for a line that is JSON; a line that is not stays as it is, and is answered that it is not valid JSON. */
function jsonItem(operation: string, line: string, extra: object = {}): string {
  try {
    return JSON.stringify({ operation, input: JSON.parse(line) as unknown, ...extra });
  } catch {
    return line;
  }
}

/**
 * The command forms written for the operations, each printing the same JSON as the HTTP API and
 * taking its value as the argument or standard input; an operation without one takes its whole
 * body (`bodyForm`).
 */
const FORMS: Readonly<Partial<Record<CurrentOperationId, CommandForm>>> = {
  sort: {
    usage: '[json-array]',
    help: ['{"sortedArray":[...]}; the array from stdin when not given', "--desc for descending, --locale TAG for a locale's collation"],
    body: (p, flags) => ({ input: readJson(argumentOrStdin(p)), ...sortOptions(flags) }),
    item: (line, _p, flags) => jsonItem('sort', line, sortOptions(flags)),
    fields: { '/locale': 'the --locale option', '/order': 'the --desc option' },
  },
  isEven: {
    usage: '[number]',
    help: ['{"ret":true|false}; exact at any size ("9007199254740993")'],
    body: (p) => ({ input: valueOrStdin(p, '<number>') }),
    item: textItem('isEven'),
  },
  isOdd: {
    usage: '[number]',
    help: ['the number from stdin when not given; negative ones need no --'],
    body: (p) => ({ input: valueOrStdin(p, '<number>') }),
    item: textItem('isOdd'),
  },
  isNumber: {
    usage: '[text]',
    help: ['whether the text is written as a number'],
    body: (p) => ({ input: valueOrStdin(p, '<text>') }),
    item: textItem('isNumber'),
  },
  toString: {
    usage: '[json]',
    help: ['{"ret":"..."}: RFC 8785 canonical text; the value from stdin when not given'],
    body: (p) => ({ input: readJson(argumentOrStdin(p)) }),
    item: (line) => jsonItem('toString', line),
  },
  stringSplit: {
    usage: '<string> [separator]',
    help: ['{"ret":[...]}; an empty separator splits into characters'],
    body: (p) => ({ input: { string: required(p, '<string>'), ...(p[1] === undefined ? {} : { seperator: p[1] }) } }),
    item: (line, p) => JSON.stringify({ operation: 'stringSplit', input: { string: line, ...(p[0] === undefined ? {} : { seperator: p[0] }) } }),
    fields: { '/input/string': 'the string', '/input/seperator': 'the separator' },
  },
};

/** The command of an operation with no form written for it: its POST body, as JSON, the argument or standard input. */
function bodyForm(id: string, operation: Operation): CommandForm {
  return {
    usage: '[json-body]',
    help: [`${operation.summary}: the JSON body of POST ${servedAt(operation)}, from stdin when not given`],
    body: (p) => readJson(argumentOrStdin(p)) as object,
    item: (line) => {
      try {
        const body = JSON.parse(line) as unknown;
        // A line that is not a JSON object stays as it is, and is answered that it is not one.
        return typeof body === 'object' && body !== null && !Array.isArray(body) ? JSON.stringify({ operation: id, ...body }) : line;
      } catch {
        return line;
      }
    },
    valueAt: '',
  };
}

/** One command per current operation, in the operation table's order, named by its operationId. */
export const COMMANDS: ReadonlyMap<string, CommandForm> = new Map(
  CURRENT_OPERATION_IDS.map((id) => [id, FORMS[id] ?? bodyForm(id, OPERATIONS[id] as Operation)]),
);

/** How many arguments a command takes at most: one per word of its usage. */
export function argumentsOf(form: CommandForm): number {
  return form.usage.split(' ').length;
}

/**
 * A problem in the command line's words: the field it names becomes the argument (or standard
 * input, when the value came from there), a place inside it, or an option, never a JSON pointer.
 *
 * @example
 * inCommandWords(problemOf(400, '/input/0 is …', [{ pointer: '/input/0', detail: '/input/0 is …' }]), FORMS.toString, true) //=> '[0] of the argument is …'
 */
export function inCommandWords(problem: Problem, form: CommandForm, fromArgument: boolean): string {
  const field = problem.errors?.[0];
  if (field === undefined || !field.detail.startsWith(field.pointer)) return problem.detail;
  return `${wordsFor(field.pointer, form, fromArgument)}${field.detail.slice(field.pointer.length)}`;
}

function wordsFor(pointer: string, form: CommandForm, fromArgument: boolean): string {
  const named = form.fields?.[pointer];
  if (named !== undefined) return named;
  const where = fromArgument ? 'the argument' : 'standard input';
  const valueAt = form.valueAt ?? '/input';
  if (pointer !== valueAt && !pointer.startsWith(`${valueAt}/`)) return pointer;
  // RFC 6901 §4: ~1 is "/" and ~0 is "~".
  const steps = pointer
    .slice(valueAt.length)
    .split('/')
    .slice(1)
    .map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (steps.length === 0) return where;
  return `${steps.map((step) => (/^\d+$/.test(step) ? `[${step}]` : `.${step}`)).join('')} of ${where}`;
}

const HELP_COLUMN = 35;

/** The help's lines for the operations' commands, in the table's order. */
export function commandsHelp(): string {
  const lines: string[] = [];
  for (const [id, { usage, help }] of COMMANDS) {
    const call = `  json-utility ${id} ${usage}`;
    const [first, ...more] = help;
    if (call.length < HELP_COLUMN - 1) lines.push(`${call.padEnd(HELP_COLUMN)}${first}`);
    else lines.push(call, `${' '.repeat(HELP_COLUMN)}${first}`);
    for (const line of more) lines.push(`${' '.repeat(HELP_COLUMN)}${line}`);
  }
  return lines.join('\n');
}
