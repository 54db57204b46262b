/**
 * The stream's line answering alone, without HTTP: `npx tsx bench/micro/line-answerer.ts [lines]`
 * answers that many isEven lines (1,000,000 by default) in 64 KiB chunks with the service's
 * LineAnswerer, five times, and prints lines per second for each pass.
 */
import { LineAnswerer } from '../../src/engine/line-stream.js';
import { DEFAULT_CONFIG } from '../../src/config.js';

const lines = Number(process.argv[2] ?? 1_000_000);
let text = '';
for (let i = 0; i < lines; i++) text += `{"operation":"isEven","input":${(i * 7919) % 1_000_003}}\n`;
const bytes = Buffer.from(text);
const CHUNK = 64 * 1024;
for (let pass = 1; pass <= 5; pass++) {
  const answerer = new LineAnswerer(DEFAULT_CONFIG);
  let chars = 0;
  const started = performance.now();
  for (let from = 0; from < bytes.length; from += CHUNK) for (const piece of answerer.answers(bytes.subarray(from, from + CHUNK))) chars += piece.length;
  chars += answerer.end().length;
  const seconds = (performance.now() - started) / 1000;
  console.log(`pass ${pass}: ${Math.round(lines / seconds).toLocaleString('en')} lines/s (${answerer.lines} answered, ${chars} characters)`);
}
