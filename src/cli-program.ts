import { VERSION } from './version.js';
import { parseArgs } from 'node:util';
import { InputError } from './core/index.js';
import { argumentsOf, COMMANDS, commandsHelp, inCommandWords, UsageError } from './cli-commands.js';
import { DEFAULT_CONFIG, SETTINGS } from './config.js';
import { JsonText, OPERATIONS, type CurrentOperationId } from './operations/index.js';
import { runValue } from './engine/run.js';
import { readConfig, run } from './server.js';
import { answerStandardInput } from './cli-lines.js';

const HELP = `json-utility ${VERSION}: exact JSON utilities, as a service or one call at a time

Usage:
  json-utility serve [--port N] [--host H] [--workers N|auto]
                                   serve the HTTP API (flags override PORT, HOST, WORKERS)
${commandsHelp()}
  json-utility <operation> --lines [--url URL]
                                   one input per line of stdin, one answer line per line
                                   (as POST /api/stream answers); --url asks that service
  json-utility --help | --version


Prints the same JSON as the HTTP API. Bad input: exit code 1 and the problem on stderr.
Every setting of \`serve\` is also an environment variable: see docs/operations.md, Configuration.`;

// An argument such as -7 or -.5 is a value, not an option: parseArgs would refuse it as an unknown flag.
const NEGATIVE_NUMBER = /^-[\d.]/;
const PLACEHOLDER = '\u0000';

async function main(argv: string[]): Promise<number> {
  const negatives: string[] = [];
  const args = argv.map((arg) => (NEGATIVE_NUMBER.test(arg) ? `${PLACEHOLDER}${negatives.push(arg) - 1}` : arg));
  const parsed = parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      port: { type: 'string' },
      host: { type: 'string' },
      workers: { type: 'string' },
      desc: { type: 'boolean' },
      locale: { type: 'string' },
      lines: { type: 'boolean' },
      url: { type: 'string' },
    },
  });
  const flags = parsed.values;
  const positionals = parsed.positionals.map((arg) => (arg.startsWith(PLACEHOLDER) ? (negatives[Number(arg.slice(1))] as string) : arg));
  const [command, ...rest] = positionals;
  if (flags.version) return print(VERSION);
  if (flags.help) return print(HELP);
  if (command === undefined) throw new UsageError(`missing a command: serve or an operation (${[...COMMANDS.keys()].join(', ')})`);

  if (command === 'serve') {
    const env = { ...process.env };
    for (const key of ['port', 'host', 'workers'] as const) if (flags[key] !== undefined) env[SETTINGS[key].env] = flags[key];
    await run(readConfig(env));
    return -1; // keeps running
  }
  const form = COMMANDS.get(command);
  if (form === undefined) throw new UsageError(`unknown command "${command}"`);
  usage = { command, line: `json-utility ${command} ${form.usage}` };
  if (flags.url !== undefined && flags.lines !== true) throw new UsageError('--url works with --lines');
  // With --lines the value is each line: only stringSplit's separator stays an argument.
  const most = flags.lines === true ? argumentsOf(form) - 1 : argumentsOf(form);
  if (rest.length > most) {
    throw new UsageError(`takes at most ${most} argument${most === 1 ? '' : 's'}, not ${rest.length}`);
  }
  if (flags.lines === true) return answerStandardInput(form, rest, flags, flags.url);
  let body: object;
  try {
    body = form.body(rest, flags);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    process.stderr.write(`${command}: ${rest.length > 0 ? 'the argument' : 'standard input'} ${error.message}\n`);
    return 1;
  }
  const outcome = runValue(OPERATIONS[command as CurrentOperationId], body, undefined, DEFAULT_CONFIG);
  if ('result' in outcome) return print(outcome.result instanceof JsonText ? outcome.result.text : JSON.stringify(outcome.result));
  process.stderr.write(`${command}: ${inCommandWords(outcome.problem, form, rest.length > 0)}\n`);
  return 1;
}

// The command being run, once it is known: a usage error names it and gives its usage line.
let usage: { command: string; line: string } | undefined;

/**
 * A usage error in two lines, never the whole help: what is wrong, then the command's usage (or
 * the general one) and where the help is. Node's words for a command line it cannot parse are
 * made the command's own.
 */
function usageMessage(error: Error & { code?: string }): string {
  const option = /^Unknown option '([^']+)'/.exec(error.message)?.[1];
  const problem = error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined ? `unknown option ${option}` : error.message;
  return `${usage?.command ?? 'json-utility'}: ${problem}\nusage: ${usage?.line ?? 'json-utility <command> [value]'} (json-utility --help for more)`;
}

function print(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (error) {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${usageMessage(error as Error)}\n`);
    process.exitCode = 2;
  } else {
    throw error;
  }
}
