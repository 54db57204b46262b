import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { CommandForm } from './cli-commands.js';
import { DEFAULT_CONFIG } from './config.js';
import { LineAnswerer } from './engine/line-stream.js';
import { tallied } from './engine/items.js';
import { ClientError, createClient, ProblemError, StreamInterruptedError } from 'json-utility-client';

type Flags = Record<string, string | boolean | undefined>;

/**
 * `json-utility <operation> --lines`: one input per line of standard input, one answer line per
 * line on standard output, as `POST /api/stream` answers them (`{"status":200,"result":…}` or
 * `{"status":400,"problem":…}`). Each line becomes the stream line of its operation
 * (`CommandForm.item`) and is answered by the service's own line answerer, here or, with `--url`,
 * by the service there. Exit code 1 when any line was answered with a problem, or when the service
 * shut down before answering every line (standard error says how many were).
 *
 * @example
 * // printf '4\n7\n' | json-utility isEven --lines
 * // {"status":200,"result":{"ret":true}}
 * // {"status":200,"result":{"ret":false}}
 */
export async function answerStandardInput(form: CommandForm, positionals: string[], flags: Flags, url: string | undefined): Promise<number> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  const items = (async function* () {
    for await (const line of lines) yield form.item(line, positionals, flags);
  })();
  return url === undefined ? answerHere(items) : answerThere(items, url);
}

async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

async function answerHere(items: AsyncIterable<string>): Promise<number> {
  const answerer = new LineAnswerer(DEFAULT_CONFIG);
  for await (const item of items) for (const piece of answerer.answers(Buffer.from(`${item}\n`))) await write(piece);
  for (const [, status] of tallied(answerer.tally)) if (status !== 200) return 1;
  return 0;
}

/** The same through the client package (json-utility-client), from the service at `base`. */
async function answerThere(items: AsyncIterable<string>, base: string): Promise<number> {
  let code = 0;
  try {
    for await (const answer of createClient({ baseUrl: base }).stream(items)) {
      if (!('result' in answer)) code = 1;
      await write(`${JSON.stringify(answer)}\n`);
    }
    return code;
  } catch (error) {
    if (error instanceof StreamInterruptedError) {
      process.stderr.write(`The service at ${base} shut down after answering ${error.answered} lines; lines ${error.answered + 1} on were not answered\n`);
    } else if (error instanceof ProblemError) {
      process.stderr.write(`The service at ${base} refused the stream: ${error.status} ${error.detail}\n`);
    } else if (error instanceof ClientError) {
      process.stderr.write(`${error.message}\n`);
    } else {
      throw error;
    }
    return 1;
  } finally {
    // Standard input may still be open, with nobody left to send it to.
    process.stdin.destroy();
  }
}
