import { once } from 'node:events';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import type { CommandForm } from './cli-commands.js';
import { DEFAULT_CONFIG } from './config.js';
import { LineAnswerer } from './http/operations/line-stream.js';

type Flags = Record<string, string | boolean | undefined>;

/**
 * `json-utility <operation> --lines`: one input per line of standard input, one answer line per
 * line on standard output, as `POST /api/stream` answers them (`{"status":200,"result":…}` or
 * `{"status":400,"problem":…}`). Each line becomes the stream line of its operation
 * (`CommandForm.item`) and is answered by the service's own line answerer, here or, with `--url`,
 * by the service there. Exit code 1 when any line was answered with a problem.
 *
 * @example
 * // printf '4\n7\n' | json-utility isEven --lines
 * // {"status":200,"result":{"ret":true}}
 * // {"status":200,"result":{"ret":false}}
 */
export async function answerStandardInput(form: CommandForm, positionals: string[], flags: Flags, url: string | undefined): Promise<number> {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  const items = (async function* () {
    for await (const line of lines) yield `${form.item(line, positionals, flags)}\n`;
  })();
  return url === undefined ? answerHere(items) : answerThere(items, url);
}

async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

async function answerHere(items: AsyncIterable<string>): Promise<number> {
  const answerer = new LineAnswerer(DEFAULT_CONFIG);
  for await (const item of items) for (const piece of answerer.answers(Buffer.from(item))) await write(piece);
  return Object.keys(answerer.tally).every((key) => key.endsWith(' 200')) ? 0 : 1;
}

async function answerThere(items: AsyncIterable<string>, base: string): Promise<number> {
  const url = new URL('/api/stream', base);
  const sent = request(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } });
  const answered = new Promise<number>((resolve, reject) => {
    sent.on('error', reject);
    sent.on('response', (response) => {
      let failed = response.statusCode !== 200;
      let rest = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (response.statusCode !== 200) return void process.stderr.write(chunk);
        process.stdout.write(chunk);
        const text = rest + chunk;
        const lines = text.split('\n');
        rest = lines.pop() ?? '';
        if (lines.some((line) => !line.startsWith('{"status":200,'))) failed = true;
      });
      response.on('end', () => resolve(failed ? 1 : 0));
      response.on('error', reject);
    });
  });
  // Refused before every line is sent (an unreachable service): the failure is awaited below, not left unhandled meanwhile.
  answered.catch(() => undefined);
  try {
    for await (const item of items) if (!sent.write(item)) await once(sent, 'drain');
    sent.end();
    return await answered;
  } catch (error) {
    process.stderr.write(`Cannot stream to POST ${url.href}: ${(error as Error).message}\n`);
    return 1;
  }
}
