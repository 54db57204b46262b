import { readFileSync } from 'node:fs';
import { collatorFor, InputError, isEven, isNumber, isOdd, sort, stringSplit, toString, type JsonValue } from './core/index.js';
import { CURRENT_OPERATION_IDS, type CurrentOperationId } from './operations/index.js';

/** A command line the `json-utility` command cannot run: exit code 2 and the help. */
export class UsageError extends Error {}

/** A bad value of an option (such as `--locale`): exit code 1, like a bad argument. */
export class OptionError extends InputError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(message);
  }
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
  if (process.stdin.isTTY) throw new UsageError('give the value as an argument or on standard input');
  return readFileSync(0, 'utf8');
}

/** The value argument, or standard input without its final line break. */
function valueOrStdin(positionals: string[], what: string): string {
  if (positionals[0] !== undefined) return positionals[0];
  if (process.stdin.isTTY) throw new UsageError(`missing ${what}: give it as an argument or on standard input`);
  return readFileSync(0, 'utf8').replace(/\r?\n$/, '');
}

function required(positionals: string[], what: string): string {
  const value = positionals[0];
  if (value === undefined) throw new UsageError(`missing ${what}`);
  return value;
}

export type Command = (positionals: string[], flags: Record<string, string | boolean | undefined>) => unknown;

/** An operation as a command: its arguments, its lines of help, and what it prints. */
export interface CommandForm {
  readonly usage: string;
  readonly help: readonly string[];
  readonly run: Command;
  /** With `--lines`: the stream line (an item, as `POST /api/stream` takes it) for one line of standard input. */
  readonly item: (line: string, positionals: string[], flags: Record<string, string | boolean | undefined>) => string;
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
 * The command form of every current operation of the table, each printing the same JSON as the
 * HTTP API; the type asks for one per operation, so a new operation is not done without it.
 */
const FORMS: Readonly<Record<CurrentOperationId, CommandForm>> = {
  sort: {
    usage: '[json-array]',
    help: ['{"sortedArray":[...]}; the array from stdin when not given', "--desc for descending, --locale TAG for a locale's collation"],
    run: (p, flags) => {
      if (typeof flags.locale === 'string') {
        try {
          collatorFor(flags.locale);
        } catch (error) {
          throw error instanceof InputError ? new OptionError('--locale', error.message) : error;
        }
      }
      const values = readJson(argumentOrStdin(p));
      if (!Array.isArray(values)) throw new InputError('must be an array of JSON values');
      return { sortedArray: sort(values, { order: flags.desc === true ? 'desc' : 'asc', locale: flags.locale as string | undefined }) };
    },
    item: (line, _p, flags) =>
      jsonItem('sort', line, { order: flags.desc === true ? 'desc' : 'asc', ...(typeof flags.locale === 'string' ? { locale: flags.locale } : {}) }),
  },
  isEven: {
    usage: '[number]',
    help: ['{"ret":true|false}; exact at any size ("9007199254740993")'],
    run: (p) => ({ ret: isEven(valueOrStdin(p, '<number>')) }),
    item: textItem('isEven'),
  },
  isOdd: {
    usage: '[number]',
    help: ['the number from stdin when not given; negative ones need no --'],
    run: (p) => ({ ret: isOdd(valueOrStdin(p, '<number>')) }),
    item: textItem('isOdd'),
  },
  isNumber: {
    usage: '[text]',
    help: ['whether the text is written as a number'],
    run: (p) => ({ ret: isNumber(valueOrStdin(p, '<text>')) }),
    item: textItem('isNumber'),
  },
  toString: {
    usage: '[json]',
    help: ['{"ret":"..."}: RFC 8785 canonical text; the value from stdin when not given'],
    run: (p) => ({ ret: toString(readJson(argumentOrStdin(p))) }),
    item: (line) => jsonItem('toString', line),
  },
  stringSplit: {
    usage: '<string> [separator]',
    help: ['{"ret":[...]}; an empty separator splits into characters'],
    run: (p) => ({ ret: stringSplit(required(p, '<string>'), p[1]) }),
    item: (line, p) => JSON.stringify({ operation: 'stringSplit', input: { string: line, ...(p[0] === undefined ? {} : { seperator: p[0] }) } }),
  },
};

/** One command per current operation, in the operation table's order, named by its operationId. */
export const COMMANDS: ReadonlyMap<string, CommandForm> = new Map(CURRENT_OPERATION_IDS.map((id) => [id, FORMS[id]]));

/** How many arguments a command takes at most: one per word of its usage. */
export function argumentsOf(form: CommandForm): number {
  return form.usage.split(' ').length;
}

/**
 * What a core error is about, in the command line's words: the argument (or standard input, when
 * the value came from there), or a place inside it.
 *
 * @example
 * subjectOf([0, 'a'], true) //=> '[0].a of the argument'
 */
export function subjectOf(path: ReadonlyArray<string | number>, fromArgument: boolean): string {
  const where = fromArgument ? 'the argument' : 'standard input';
  if (path.length === 0) return where;
  return `${path.map((step) => (typeof step === 'number' ? `[${step}]` : `.${step}`)).join('')} of ${where}`;
}

const HELP_COLUMN = 35;

/** The help's lines for the operations' commands, in the table's order. */
export function commandsHelp(): string {
  const lines: string[] = [];
  for (const id of CURRENT_OPERATION_IDS) {
    const { usage, help } = FORMS[id];
    const call = `  json-utility ${id} ${usage}`;
    const [first, ...more] = help;
    if (call.length < HELP_COLUMN - 1) lines.push(`${call.padEnd(HELP_COLUMN)}${first}`);
    else lines.push(call, `${' '.repeat(HELP_COLUMN)}${first}`);
    for (const line of more) lines.push(`${' '.repeat(HELP_COLUMN)}${line}`);
  }
  return lines.join('\n');
}
