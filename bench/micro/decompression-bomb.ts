/**
 * Why request bodies are decoded by src/http/protocol/content-coding.ts and not by
 * @fastify/compress's request decompression: what a decompression bomb costs each. Two Fastify
 * apps in this process, the same BODY_LIMIT and JSON parser, one decoding with @fastify/compress
 * (`requestDecompression`, its preParsing hook), one with decodeRequestBodies; each is sent the same
 * bombs over a socket (64 KiB of gzip, ~100 bytes of br, 2 KiB of zstd, each inflating to 64 MiB),
 * alternating. For each: the bytes the decoders inflated, counted until they have been quiet for
 * 200 ms after the 413 has arrived, and the process's CPU time over the same (all threads: zlib inflates on libuv's pool,
 * so it is noisy); `none` takes the same bytes undecoded, for the cost of the exchange itself.
 *
 *   npx tsx bench/micro/decompression-bomb.ts [--rounds 5] [--limit 1048576]
 */
import { Transform } from 'node:stream';
import { parseArgs } from 'node:util';
import * as zlib from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import compress from '@fastify/compress';
import { decodeRequestBodies } from '../../src/http/protocol/content-coding.js';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, limit: { type: 'string', default: String(1024 * 1024) } } });
const limit = Number(flags.limit);
const spaces = Buffer.alloc(64 * 1024 * 1024, 0x20);
const bombs: Record<string, Buffer> = {
  gzip: zlib.gzipSync(spaces, { level: 9 }),
  br: zlib.brotliCompressSync(spaces),
  ...(typeof zlib.zstdCompressSync === 'function' ? { zstd: zlib.zstdCompressSync(spaces) } : {}),
};

async function app(decoder: 'fastify-compress' | 'content-coding' | 'none'): Promise<{ app: FastifyInstance; url: string }> {
  const built = Fastify({ bodyLimit: limit });
  built.removeAllContentTypeParsers();
  built.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  if (decoder === 'fastify-compress') await built.register(compress, { global: false, globalDecompression: true });
  else if (decoder === 'content-coding') decodeRequestBodies(built, limit);
  // The service's error handler answers a ProblemError with its status (http/problem-responses.ts); this one does the same.
  built.setErrorHandler((error: Error & { status?: number; statusCode?: number }, _request, reply) =>
    reply.code(error.status ?? error.statusCode ?? 500).send({ detail: error.message }),
  );
  built.post('/echo', async (request) => ({ bytes: (request.body as Buffer).length }));
  const url = await built.listen({ port: 0, host: '127.0.0.1' });
  return { app: built, url };
}

// `none` reads the bomb's bytes as they are (no decoding): what the exchange costs without any inflating.
// Bytes every decoder in this process hands on, whoever made it: Gunzip, BrotliDecompress and ZstdDecompress share Transform's push.
let inflatedBytes = 0;
for (const decoder of [zlib.Gunzip, zlib.BrotliDecompress, ...(typeof zlib.ZstdDecompress === 'function' ? [zlib.ZstdDecompress] : [])]) {
  decoder.prototype.push = function (this: zlib.Gunzip, chunk: Buffer | null, encoding?: BufferEncoding) {
    if (chunk !== null) inflatedBytes += chunk.length;
    return Transform.prototype.push.call(this, chunk, encoding);
  };
}

const targets = { none: await app('none'), 'fastify-compress': await app('fastify-compress'), 'content-coding': await app('content-coding') };
const cpu: Record<string, Record<string, number[]>> = {};
const inflated: Record<string, Record<string, number[]>> = {};
for (let round = 0; round < Number(flags.rounds); round++) {
  for (const [coding, bomb] of Object.entries(bombs)) {
    for (const [name, { url }] of Object.entries(targets)) {
      const started = process.cpuUsage();
      inflatedBytes = 0;
      const response = await fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': coding }, body: bomb });
      await response.text();
      if (response.status !== (name === 'none' ? 200 : 413)) throw new Error(`${name} answered a ${coding} bomb with ${response.status}`);
      // Whatever goes on inflating after the answer is counted too.
      // Until the decoders have gone quiet: one that goes on after the answer is still inflating this bomb.
      for (let before = -1; before !== inflatedBytes;) {
        before = inflatedBytes;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const used = process.cpuUsage(started);
      ((cpu[name] ??= {})[coding] ??= []).push((used.user + used.system) / 1000);
      ((inflated[name] ??= {})[coding] ??= []).push(inflatedBytes);
    }
  }
}
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const report = {
  node: process.version,
  bodyLimit: limit,
  bombBytes: Object.fromEntries(Object.entries(bombs).map(([coding, bomb]) => [coding, bomb.length])),
  // The most any bomb of each coding inflated, its answer sent and the decoders quiet.
  inflatedBytesPerBomb: Object.fromEntries(
    Object.entries(inflated).map(([name, byCoding]) => [
      name,
      Object.fromEntries(Object.entries(byCoding).map(([coding, values]) => [coding, Math.max(...values)])),
    ]),
  ),
  cpuMillisecondsPerBomb: Object.fromEntries(
    Object.entries(cpu).map(([name, byCoding]) => [
      name,
      Object.fromEntries(
        Object.entries(byCoding).map(([coding, values]) => [
          coding,
          { median: Number(median(values).toFixed(1)), all: values.map((v) => Number(v.toFixed(1))) },
        ]),
      ),
    ]),
  ),
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
for (const { app: running } of Object.values(targets)) await running.close();
