import { once } from 'node:events';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import type { CommandForm } from './cli-commands.js';
import { DEFAULT_CONFIG } from './config.js';
import { LineAnswerer } from './engine/line-stream.js';

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
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          if (line.startsWith('{"status":200,')) {
            process.stdout.write(`${line}\n`);
            continue;
          }
          failed = true;
          const { answered } = (JSON.parse(line) as { problem: { answered?: number } }).problem;
          // The stream's last line when the service shut down: not an answer to a line of its own.
          if (answered === undefined) process.stdout.write(`${line}\n`);
          else process.stderr.write(`The service at ${base} shut down after answering ${answered} lines; lines ${answered + 1} on were not answered\n`);
        }
      });
      response.on('end', () => resolve(failed ? 1 : 0));
      response.on('error', reject);
    });
  });
  // Refused before every line is sent (an unreachable service): the failure is awaited below, not left unhandled meanwhile.
  answered.catch(() => undefined);
  let over = false;
  answered.then(
    () => (over = true),
    () => (over = true),
  );
  try {
    for await (const item of items) {
      // The service ended the stream (it shut down): nothing more is read from standard input.
      if (over) break;
      if (!sent.write(item)) await Promise.race([once(sent, 'drain'), answered]);
    }
    sent.end();
    const code = await answered;
    // Standard input may still be open, with nobody to send it to.
    process.stdin.destroy();
    return code;
  } catch (error) {
    process.stderr.write(`Cannot stream to POST ${url.href}: ${(error as Error).message}\n`);
    return 1;
  }
}
