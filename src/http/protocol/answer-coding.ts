import * as zlib from 'node:zlib';
import compress from '@fastify/compress';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';

const KIB = 1024;
const MIB = 1024 * KIB;
const HAS_ZSTD = typeof zlib.createZstdCompress === 'function';

/** The codings answers may be sent in, the service's preference first when the client weighs several alike (RFC 9110 §12.5.3). */
export const ANSWER_CODINGS: readonly string[] = [...(HAS_ZSTD ? ['zstd'] : []), 'br', 'gzip', 'deflate'];

// What one encoder holds at its peak, for the memory budget: measured with 40 encoders at once,
// each given 3-4 MiB of a sorted answer (RSS over the count; docs/performance.md,
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

// Every answer of a route that may code its answers says so, coded or not (RFC 9110 §12.5.5), after any Vary already set (CORS's Origin).
const varyOnAcceptEncoding: onRequestHookHandler = (_request, reply, done) => {
  const vary = reply.getHeader('vary');
  reply.header('vary', vary === undefined ? 'accept-encoding' : `${String(vary)}, accept-encoding`);
  done();
};

/**
 * Answers compressed when the request asks for it, by @fastify/compress
 * (https://github.com/fastify/fastify-compress): zstd (where this Node.js has it), br, gzip or
 * deflate as `Accept-Encoding` weighs them, for answers of at least `minBytes`; small ones
 * synchronously, larger ones through zlib's asynchronous streams, off the event loop. Routes whose
 * answers are always small say `compress: false` and pay nothing; every other route's answers carry
 * `Vary: Accept-Encoding`. Request bodies are decoded by content-coding.ts, not by the plugin.
 * Register before the routes.
 */
export async function codeAnswers(app: FastifyInstance, minBytes: number | 'off'): Promise<void> {
  if (minBytes === 'off') return;
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    threshold: minBytes,
    encodings: [...ANSWER_CODINGS, 'identity'] as Array<'zstd' | 'br' | 'gzip' | 'deflate' | 'identity'>,
    customTypes: COMPRESSIBLE,
  });
  app.addHook('onRoute', (route) => {
    // Preflights and 405s (OPTIONS, the other methods) answer with no body.
    const answersWithBody = [route.method].flat().some((method) => method === 'GET' || method === 'POST');
    if (route.compress === false || !answersWithBody) return;
    route.onRequest = [...[route.onRequest ?? []].flat(), varyOnAcceptEncoding];
  });
}
