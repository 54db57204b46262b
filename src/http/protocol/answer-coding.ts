import * as zlib from 'node:zlib';
import compress from '@fastify/compress';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

const KIB = 1024;
const MIB = 1024 * KIB;
const HAS_ZSTD = typeof zlib.createZstdCompress === 'function';

/** The codings answers may be sent in, the service's preference first when the client weighs several alike (RFC 9110 §12.5.3). */
export const ANSWER_CODINGS: readonly string[] = [...(HAS_ZSTD ? ['zstd'] : []), 'br', 'gzip', 'deflate'];

// What one encoder holds at its peak, for the memory budget: measured with 40 encoders at once,
// each given 3-4 MiB of a sorted answer (RSS over the count; bench/results/history-2026-11.md,
// Earlier measurements): gzip and deflate 280-346 KiB, br at quality 4
// (@fastify/compress's default) 3.9-6.4 MiB, zstd at its default level 3.3 MiB.
const ENCODER_BYTES: Readonly<Record<string, number>> = { gzip: 384 * KIB, deflate: 384 * KIB, br: 8 * MIB, zstd: 4 * MIB };

/**
 * What compressing the answer to a request with this `Accept-Encoding` holds in memory, for the
 * memory budget: the encoder of the coding it would get, 0 for none.
 *
 * @example
 * encoderBytesOf('gzip;q=1, br;q=0.5') //=> 393216
 */
export function encoderBytesOf(acceptEncoding: string): number {
  const coding = negotiate(acceptEncoding, ANSWER_CODINGS as string[]);
  return coding === undefined || coding === null ? 0 : (ENCODER_BYTES[coding] ?? 0);
}

/** Media types worth compressing: JSON, problem+json, NDJSON, and the docs page's text. */
const COMPRESSIBLE = /^text\/|[+/]json(?:;|$)|\/x-ndjson(?:;|$)|javascript|svg/;

/**
 * Route option for answers written a piece at a time (the NDJSON stream): each piece is flushed
 * through the encoder as it is written, so that a reader sees each answer without waiting for
 * more. zstd is left out there: its stream takes its own flush modes, not zlib's.
 */
export const FLUSH_EACH_WRITE = {
  // A route's options replace the plugin's rather than add to them (@fastify/compress 9: processCompressParams).
  customTypes: COMPRESSIBLE,
  encodings: ['br', 'gzip', 'deflate'] as Array<'br' | 'gzip' | 'deflate'>,
  zlibOptions: { flush: zlib.constants.Z_SYNC_FLUSH },
  brotliOptions: { flush: zlib.constants.BROTLI_OPERATION_FLUSH, params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
};

/**
 * What the encoder of this request's answer will hold in memory, for the memory budget: 0 when the
 * route's answers (`route`, its config, which the caller has read) are never coded or the request asks for no coding. Read once a request.
 *
 * @example
 * answerEncoderBytes(request, routeConfigOf(request)) //=> 393216 for `Accept-Encoding: gzip` on a route whose answers may be coded
 */
export function answerEncoderBytes(request: FastifyRequest, route: FastifyContextConfig): number {
  if (request.encoderBytes !== undefined) return request.encoderBytes;
  const accepted = request.headers['accept-encoding'];
  const coded = accepted !== undefined && route.codedAnswers !== false;
  return (request.encoderBytes = coded ? encoderBytesOf(accepted) : 0);
}

/**
 * The `answer-coding` plugin: answers compressed when the request asks for it, by @fastify/compress
 * (https://github.com/fastify/fastify-compress): zstd (where this Node.js has it), br, gzip or
 * deflate as `Accept-Encoding` weighs them, for answers of at least `minBytes`; small ones
 * synchronously, larger ones through zlib's asynchronous streams, off the event loop. A route
 * whose answers are always small says `config.codedAnswers: false` and pays nothing; the others'
 * answers say `Vary: Accept-Encoding` (response-headers.ts). Request bodies are decoded by
 * content-coding.ts, not by @fastify/compress. With `minBytes` `off`, nothing is compressed.
 *
 * @example
 * await app.register(answerCoding, { minBytes: 1024 }); // answers of 1 KiB or more coded when asked
 */
export const answerCoding = fp<{ minBytes: number | 'off' }>(
  async (app, { minBytes }) => {
    // Nothing to read when no answer is ever coded.
    app.decorateRequest('encoderBytes', minBytes === 'off' ? 0 : undefined);
    if (minBytes === 'off') return;
    await app.register(compress, {
      global: true,
      globalDecompression: false,
      threshold: minBytes,
      encodings: [...ANSWER_CODINGS, 'identity'] as Array<'zstd' | 'br' | 'gzip' | 'deflate' | 'identity'>,
      customTypes: COMPRESSIBLE,
    });
  },
  // @fastify/compress reads its route option `compress`, which route-config.ts sets from the route's config.
  { name: 'answer-coding', fastify: '5.x', dependencies: ['route-config'] },
);
