import { readFileSync } from 'node:fs';
import { InputError, isEven, isNumber, isOdd, sort, stringSplit, toString, type JsonValue } from './core/index.js';

/** A command line the `json-utility` command cannot run: exit code 2 and the help. */
export class UsageError extends Error {}

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

/**
 * One command per current operation, named by its operationId (test/operations-everywhere.test.ts
 * checks that none is missing); each prints the same JSON as the HTTP API.
 */
export const COMMANDS: ReadonlyMap<string, Command> = new Map<string, Command>([
  ['isEven', (p) => ({ ret: isEven(valueOrStdin(p, '<number>')) })],
  ['isOdd', (p) => ({ ret: isOdd(valueOrStdin(p, '<number>')) })],
  ['isNumber', (p) => ({ ret: isNumber(valueOrStdin(p, '<text>')) })],
  [
    'sort',
    (p, flags) => {
      const values = readJson(argumentOrStdin(p));
      if (!Array.isArray(values)) throw new InputError('must be an array of JSON values');
      return { sortedArray: sort(values, { order: flags.desc === true ? 'desc' : 'asc', locale: flags.locale as string | undefined }) };
    },
  ],
  ['toString', (p) => ({ ret: toString(readJson(argumentOrStdin(p))) })],
  ['stringSplit', (p) => ({ ret: stringSplit(required(p, '<string>'), p[1]) })],
]);
