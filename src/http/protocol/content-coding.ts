import { Transform, type Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import type { FastifyRequest, preParsingHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { ProblemError } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { routeConfigOf } from './route-config.js';

/** A content coding the service decodes in request bodies (RFC 9110 §8.4.1). */
export interface RequestCoding {
  readonly name: string;
  /** What one decoder may hold at its peak, for the memory budget: its window and its state. */
  readonly decoderBytes: number;
  decoder(): zlib.Inflate | zlib.Gunzip | zlib.BrotliDecompress | zlib.ZstdDecompress;
}

const KIB = 1024;
const MIB = 1024 * KIB;
// zstd frames name their own window, up to 2^31 bytes; HTTP's zstd coding asks decoders for no more than 8 MiB (RFC 9659 §3).
const ZSTD_WINDOW_LOG_MAX = 23;

const CODINGS: readonly RequestCoding[] = [
  // A 32 KiB window (RFC 1951 §2), zlib's inflate state and the output it holds: 133-387 KiB measured
  // (bench/results/history-2026-11.md, Earlier measurements).
  { name: 'gzip', decoderBytes: 384 * KIB, decoder: () => zlib.createGunzip() },
  // HTTP's "deflate" is the zlib format (RFC 9110 §8.4.1.2), not raw deflate.
  { name: 'deflate', decoderBytes: 384 * KIB, decoder: () => zlib.createInflate() },
  // Brotli's window is at most 16 MiB (RFC 7932 §9.1), allocated as the stream asks.
  { name: 'br', decoderBytes: 16 * MIB + 256 * KIB, decoder: () => zlib.createBrotliDecompress() },
  ...(typeof zlib.createZstdDecompress === 'function'
    ? [
        {
          name: 'zstd',
          decoderBytes: 8 * MIB + 256 * KIB,
          decoder: () => zlib.createZstdDecompress({ params: { [zlib.constants.ZSTD_d_windowLogMax]: ZSTD_WINDOW_LOG_MAX } }),
        },
      ]
    : []),
];

/** The codings request bodies may have on this Node.js, as `Accept-Encoding` names them on a 415 (RFC 9110 §12.5.3). */
export const REQUEST_CODINGS: readonly string[] = CODINGS.map((coding) => coding.name);
const ACCEPT_ENCODING = REQUEST_CODINGS.join(', ');
/** The words of the problems a body's coding gets. */
export const CODING_TEXTS = {
  unknownCoding: (coding: string) =>
    `The request body's Content-Encoding ${coding} is not one this service reads; send it as it is, or coded with one of: ${ACCEPT_ENCODING}`,
  severalCodings: (header: string) =>
    `The request body has several codings (Content-Encoding: ${header}); this service reads one at a time, one of: ${ACCEPT_ENCODING}`,
  corruptCoding: (coding: string, reason: string) => `The request body is not valid ${coding} (Content-Encoding: ${coding}): ${reason}`,
};
const BY_NAME = new Map<string, RequestCoding>([
  ...CODINGS.map((coding): [string, RequestCoding] => [coding.name, coding]),
  ['x-gzip', CODINGS[0] as RequestCoding],
]);

/**
 * The coding a `Content-Encoding` header names, lower-cased (codings are case-insensitive, RFC 9110
 * §8.4.1; `x-gzip` is gzip, §8.4.1.3); undefined for none or `identity`. Throws a 415 problem,
 * with `Accept-Encoding` naming the codings read, for a coding not read or for more than one.
 *
 * @example
 * requestCoding('GZIP')?.name  //=> 'gzip'
 * requestCoding('identity')    //=> undefined
 * requestCoding('x-unknown')   // throws ProblemError 415
 */
export function requestCoding(header: string | undefined): RequestCoding | undefined {
  if (header === undefined) return undefined;
  const names = header
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'identity');
  if (names.length === 0) return undefined;
  const coding = names.length === 1 ? BY_NAME.get(names[0] as string) : undefined;
  if (coding === undefined) {
    const detail = names.length === 1 ? CODING_TEXTS.unknownCoding(names[0] as string) : CODING_TEXTS.severalCodings(header.trim());
    throw new ProblemError(415, detail, undefined, { 'accept-encoding': ACCEPT_ENCODING });
  }
  return coding;
}

/**
 * The coding of a request's body, from its `Content-Encoding`, read once a request (the
 * admission reads it first, for the decoder's memory; the decoding hook then finds it): undefined
 * for none. Throws the 415 problem of `requestCoding`, each time it is asked.
 *
 * @example
 * bodyCodingOf(request)?.decoderBytes //=> 393216 for `Content-Encoding: gzip`
 */
export function bodyCodingOf(request: FastifyRequest): RequestCoding | undefined {
  let coding = request.bodyCoding;
  if (coding === undefined) {
    try {
      coding = requestCoding(request.headers['content-encoding']) ?? null;
    } catch (error) {
      coding = error as ProblemError;
    }
    request.bodyCoding = coding;
  }
  if (coding instanceof ProblemError) throw coding;
  return coding ?? undefined;
}

/** A decoded body as Fastify's body reader takes it: `receivedEncodedLength` is checked against `Content-Length`. */
type DecodedBody = Transform & { receivedEncodedLength: number };

/**
 * The body of `raw` decoded, as a stream of at most `limit` bytes: past it, the stream fails with
 * a 413 problem and the decoder stops at once, so a small body that would inflate to gigabytes
 * costs no more than `limit` bytes of output (a decompression bomb). A corrupt body fails with a
 * 400 problem naming its coding. The raw body goes on being read and dropped after a failure, so
 * that the answer can be written (protocol/lingering-close.ts).
 *
 * @example
 * const body = decodedBody(request.raw, requestCoding('gzip')!, 16 * 1024 * 1024);
 */
export function decodedBody(raw: Readable, coding: RequestCoding, limit: number): DecodedBody {
  const decoder = coding.decoder();
  let decodedBytes = 0;
  const body = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      decodedBytes += chunk.length;
      if (decodedBytes > limit) return callback(new ProblemError(413, LIMIT_TEXTS.decodedBody(limit, coding.name)));
      callback(null, chunk);
    },
  }) as DecodedBody;
  body.receivedEncodedLength = 0;
  const countEncoded = (chunk: Buffer) => {
    body.receivedEncodedLength += chunk.length;
  };
  raw.on('data', countEncoded);
  decoder.on('error', (error: Error) => body.destroy(new ProblemError(400, CODING_TEXTS.corruptCoding(coding.name, error.message))));
  // A failure or the end of the request stops the decoder: nothing more is inflated.
  body.on('close', () => {
    raw.unpipe(decoder);
    decoder.destroy();
  });
  raw.once('close', () => {
    raw.off('data', countEncoded);
    if (!raw.readableEnded) body.destroy(new Error('The client closed the connection before its body arrived'));
  });
  raw.pipe(decoder).pipe(body);
  return body;
}

/**
 * The `content-coding` plugin: the body of a request is decoded when it comes with a
 * `Content-Encoding`: gzip, deflate, br, and zstd where this Node.js has it. `bodyLimit` and the
 * memory budget apply to the decoded bytes (http/memory/memory-admission.ts); a route with
 * `config.decodedBodyLimit` set to `Infinity` (the stream, whose lines have their own limit) has
 * none. A body in another coding gets 415, one that is not what its coding says 400. Its hook is
 * the context's where it is registered: app.ts registers it beside the routes that take a body,
 * after the memory admission. A plain body costs a header lookup.
 *
 * @example
 * await bodies.register(contentCoding, { bodyLimit: 1024 * 1024 }); // after memory-admission
 */
export const contentCoding = fp<{ bodyLimit: number }>(
  async (app, { bodyLimit }) => {
    app.decorateRequest('bodyCoding', undefined);
    const decode: preParsingHookHandler = (request, _reply, payload, done) => {
      if (request.headers['content-encoding'] === undefined) return done(null, payload);
      let coding: RequestCoding | undefined;
      try {
        coding = bodyCodingOf(request);
      } catch (error) {
        return done(error as ProblemError);
      }
      done(null, coding === undefined ? payload : decodedBody(payload, coding, routeConfigOf(request).decodedBodyLimit ?? bodyLimit));
    };
    app.addHook('preParsing', decode);
  },
  // After the admission, whose hook reserves the decoder's memory before this one starts it.
  { name: 'content-coding', fastify: '5.x', dependencies: ['memory-admission'] },
);
