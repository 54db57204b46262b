/**
 * What one zlib coder holds at its peak, for the memory budget's figures
 * (http/protocol/content-coding.ts, answer-coding.ts): `--count` coders of one kind at once, each
 * written 4 MiB (an encoder: a sorted answer of 300,000 doubles; a decoder: that answer coded with
 * the largest window the kind allows here), then RSS over the count, after a collection. Run with
 * `--expose-gc`, one kind a process:
 *
 *   for kind in gzip deflate br zstd gunzip inflate brotli-decoder zstd-decoder; do
 *     node --expose-gc --import tsx bench/micro/coder-memory.ts $kind; done
 */
import * as zlib from 'node:zlib';

const [kind = 'gzip', countText = '40'] = process.argv.slice(2);
const count = Number(countText);
const answer = Buffer.from(JSON.stringify({ sortedArray: Array.from({ length: 300_000 }, (_, i) => i * 3.7 + 0.1) }));
const { constants } = zlib;
const coders: Record<
  string,
  {
    make: () => zlib.Gzip | zlib.Gunzip | zlib.BrotliCompress | zlib.BrotliDecompress | zlib.ZstdCompress | zlib.ZstdDecompress | zlib.Deflate | zlib.Inflate;
    input: Buffer;
  }
> = {
  gzip: { make: () => zlib.createGzip(), input: answer },
  deflate: { make: () => zlib.createDeflate(), input: answer },
  // Quality 4: @fastify/compress's default.
  br: { make: () => zlib.createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }), input: answer },
  zstd: { make: () => zlib.createZstdCompress(), input: answer },
  gunzip: { make: () => zlib.createGunzip(), input: zlib.gzipSync(answer) },
  inflate: { make: () => zlib.createInflate(), input: zlib.deflateSync(answer) },
  'brotli-decoder': { make: () => zlib.createBrotliDecompress(), input: zlib.brotliCompressSync(answer, { params: { [constants.BROTLI_PARAM_LGWIN]: 24 } }) },
  'zstd-decoder': {
    make: () => zlib.createZstdDecompress({ params: { [constants.ZSTD_d_windowLogMax]: 23 } }),
    input: zlib.zstdCompressSync(answer, { params: { [constants.ZSTD_c_windowLog]: 23 } }),
  },
};
const coder = coders[kind];
if (coder === undefined) throw new Error(`kind: one of ${Object.keys(coders).join(', ')}`);
const collect = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
collect();
const before = process.memoryUsage().rss;
const running = Array.from({ length: count }, () => {
  const stream = coder.make();
  stream.on('data', () => undefined);
  stream.write(coder.input.subarray(0, 4 * 1024 * 1024));
  return stream;
});
await new Promise((resolve) => setTimeout(resolve, 1500));
collect();
const perCoder = (process.memoryUsage().rss - before) / count;
process.stdout.write(`${kind}: ${Math.round(perCoder / 1024)} KiB a coder (${count} at once, ${coder.input.length} bytes of input each)\n`);
for (const stream of running) stream.destroy();
