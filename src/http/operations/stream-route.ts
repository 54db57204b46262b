import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyPluginAsync } from 'fastify';
import { answerText } from '../../engine/items.js';
import { problemOutcome } from '../../engine/run.js';
import { LineAnswerer, type StreamLimits } from '../../engine/line-stream.js';
import { answerHeaders, codingHeaders, documentedRequest, problemResponses, referTo } from './schemas.js';
import { StreamAnswerLineSchema, StreamLineSchema } from './batch-schemas.js';
import type { Answering } from './routes.js';
import { ownHooks } from '../protocol/route-config.js';
import { streamPeakBytes } from '../memory/estimates.js';
import { exemptFromRequestTimeout } from '../protocol/request-timeout.js';
import { FLUSH_EACH_WRITE } from '../protocol/answer-coding.js';
import { problemOf, ProblemError, type Problem } from '../../operations/problem.js';
import { LIMIT_TEXTS } from '../../operations/limit-texts.js';
import { SETTINGS } from '../../config.js';
import { BODY_ERRORS } from '../../operations/define.js';
import { CODING_TEXTS } from '../protocol/content-coding.js';

/**
 * `POST /stream`: NDJSON in, NDJSON out, each line an operation as in a batch (batch-route.ts),
 * answered as the lines arrive, and ended cleanly by shutdown. It is admitted by memory
 * (memory/memory-admission.ts) with a fixed reservation for as long as it runs.
 */

export interface StreamRouteLimits extends StreamLimits {
  readonly streamIdleTimeoutMs: number;
  readonly streamTimeoutMs: number;
}

const NDJSON_CONTENT_TYPE = 'application/x-ndjson; charset=utf-8';
/** When a stream ended by shutdown may be sent again: at once, to another instance the load balancer picks. */
const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

/** The last line of a stream that shutdown ended: a 503 problem that says how many lines were answered, so the client knows where to resume. */
interface ShutdownProblem extends Problem {
  readonly answered: number;
  readonly retryAfter: number;
}
const STREAM_MEDIA_TYPE_TEXT = 'The stream must be NDJSON, one JSON object per line, sent with Content-Type: application/x-ndjson';
const STREAM_EXAMPLE = '{"operation":"isEven","input":4}\n{"operation":"isOdd","input":1.5}\n';
// What the service answers STREAM_EXAMPLE (test/http/openapi.test.ts sends it).
const STREAM_ANSWER_EXAMPLE =
  '{"status":200,"result":{"ret":true}}\n' +
  '{"status":400,"problem":{"type":"about:blank","title":"Bad Request","status":400,"detail":"/input must be an integer","errors":[{"pointer":"/input","detail":"/input must be an integer"}]}}\n';

/** The stream route, under the prefix it is registered with; `stopping` aborts when shutdown begins. */
export const streamRoute: FastifyPluginAsync<Answering & { readonly limits: StreamRouteLimits; readonly stopping: AbortSignal }> = async (app, answering) => {
  const { limits } = answering;
  await app.register(async (scope) => {
    // Only NDJSON here, read as it arrives; JSON is the batch's.
    scope.removeAllContentTypeParsers();
    // The body is handed on as a stream, decoded when it comes coded (protocol/content-coding.ts).
    scope.addContentTypeParser('application/x-ndjson', (_request, payload, done) => done(null, payload));
    scope.post(
      '/stream',
      {
        ...ownHooks({ codedAnswers: answering.codesAnswers }),
        compress: FLUSH_EACH_WRITE,
        config: {
          memory: { fixedBytes: streamPeakBytes(limits.streamMaxLineBytes) },
          // A stream has no total size; its lines have theirs (STREAM_MAX_LINE_BYTES), decoded or not.
          decodedBodyLimit: Infinity,
          mediaTypeProblem: STREAM_MEDIA_TYPE_TEXT,
          ...documentedRequest({
            body: {
              content: {
                'application/x-ndjson': {
                  schema: {
                    type: 'string',
                    description: 'One operation per line: each line a `StreamLine`',
                    examples: [STREAM_EXAMPLE],
                    'x-itemSchema': referTo(StreamLineSchema),
                  },
                },
              },
            },
            headers: codingHeaders(true),
          }),
        },
        schema: {
          operationId: 'stream',
          summary: 'Answer a stream of operations, one per line',
          description:
            'NDJSON: each line is one operation, as in a batch; each answer is one line, in order, written as soon as it is known. ' +
            `A malformed line, or one over a limit, gets its problem line and the stream goes on. A line over ${SETTINGS.streamMaxLineBytes.env} is refused unread. ` +
            `The stream may run for ${SETTINGS.streamTimeoutMs.env} and be silent for ${SETTINGS.streamIdleTimeoutMs.env}; it holds a fixed share of the memory budget. ` +
            'A coded body is decoded as it arrives, and coded answers (br, gzip, deflate) are flushed answer by answer; a coded body that turns out corrupt ends the stream with a 400 problem line. ' +
            'When the service shuts down, a running stream answers the lines it has read, then ends with a last line: a 503 problem whose `answered` says how many lines were answered ' +
            '(send the rest again, in a new stream, after `retryAfter` seconds); a new stream then gets 503 with `Retry-After`.',
          tags: ['batch'],
          response: {
            200: {
              description: 'One answer per line, in order: `{"status":200,"result":…}` or `{"status":400,"problem":…}`',
              headers: answerHeaders(true),
              content: {
                'application/x-ndjson': {
                  schema: {
                    type: 'string',
                    description: 'One answer per line: each line a `StreamAnswerLine`',
                    examples: [STREAM_ANSWER_EXAMPLE],
                    'x-itemSchema': referTo(StreamAnswerLineSchema),
                  },
                },
              },
            },
            ...problemResponses(
              {
                headers: answerHeaders(true),
                badRequest: problemOf(400, CODING_TEXTS.corruptCoding('gzip', 'incorrect header check')),
                path: `${app.prefix}/stream`,
                allow: 'OPTIONS, POST',
                mediaTypeProblem: STREAM_MEDIA_TYPE_TEXT,
              },
              ...BODY_ERRORS,
            ),
          },
        },
      },
      async (request, reply) => {
        if (answering.stopping.aborted) {
          request.refusedOnPurpose = true;
          reply.header('retry-after', String(SHUTDOWN_RETRY_AFTER_SECONDS));
          throw new ProblemError(503, LIMIT_TEXTS.shuttingDown);
        }
        const lines = new LineAnswerer(limits);
        request.operationTally = lines.tally;
        return reply
          .type(NDJSON_CONTENT_TYPE)
          .send(Readable.from(answerLines(request.raw, request.body as Readable, reply.raw, lines, limits, answering.stopping), { objectMode: false }));
      },
    );
  });
};

/**
 * The answer lines of a stream as its lines arrive. It reads a chunk only once the answers before
 * it have been taken (Readable.from asks for more only then), so a client that stops reading
 * makes the service stop reading, and the client's own sending stops with it (TCP's window).
 * A stream silent both ways for STREAM_IDLE_TIMEOUT_MS ends, as does one that runs past
 * STREAM_TIMEOUT_MS, which replaces REQUEST_TIMEOUT_MS for it. When `stopping` aborts (shutdown),
 * the lines already read are answered and a last line says how many were (`ShutdownProblem`).
 */
async function* answerLines(
  request: IncomingMessage,
  body: Readable,
  response: ServerResponse,
  lines: LineAnswerer,
  limits: StreamRouteLimits,
  stopping: AbortSignal,
): AsyncGenerator<string> {
  const socket = request.socket;
  const input = body.iterator({ destroyOnReturn: false });
  // Why the stream ends early, once a timeout has fired; `wake` ends a wait for input at once.
  // (A wait races its own promise, never one that lives as long as the stream: a pending promise
  // raced against every chunk would keep every chunk reachable.)
  // The last line, once a timeout has fired or shutdown has begun.
  let stopReason: (() => string) | undefined;
  let wake: ((reason: () => string) => void) | undefined;
  // While an answer waits for the client to take it there is nothing to tell it of a timeout: the connection closes.
  let waitingForClient = false;
  const ending = (text: string) => () => {
    if (waitingForClient) return void socket.destroy();
    stopReason = () => answerText(problemOutcome(problemOf(408, text)));
    wake?.(stopReason);
  };
  const shutdown = () => {
    // A client taking an answer now takes the last line after it.
    stopReason = () => {
      const problem: ShutdownProblem = {
        ...problemOf(503, LIMIT_TEXTS.streamShutdown(lines.lines, SHUTDOWN_RETRY_AFTER_SECONDS)),
        answered: lines.lines,
        retryAfter: SHUTDOWN_RETRY_AFTER_SECONDS,
      };
      return answerText(problemOutcome(problem));
    };
    wake?.(stopReason);
  };
  const idle = setTimeout(ending(LIMIT_TEXTS.streamIdle(limits.streamIdleTimeoutMs)), limits.streamIdleTimeoutMs);
  const total = setTimeout(ending(LIMIT_TEXTS.streamTotal(limits.streamTimeoutMs)), limits.streamTimeoutMs);
  stopping.addEventListener('abort', shutdown);
  exemptFromRequestTimeout(socket, true);
  try {
    for (;;) {
      const next =
        stopReason ??
        (await new Promise<IteratorResult<unknown> | (() => string)>((resolve, reject) => {
          wake = resolve;
          input.next().then(resolve, reject);
        }));
      wake = undefined;
      if (typeof next === 'function') {
        // The rest of the body is not read: the connection closes once the answer is written (lingering, protocol/connections.ts).
        response.once('finish', () => socket.destroySoon());
        // A client that takes no answer will not take this one either: past the idle time the connection closes.
        const giveUp = setTimeout(() => socket.destroy(), limits.streamIdleTimeoutMs);
        response.once('close', () => clearTimeout(giveUp));
        yield next() + '\n';
        return;
      }
      if (next.done === true) break;
      idle.refresh();
      for (const piece of lines.answers(next.value as Buffer)) {
        waitingForClient = true;
        yield piece;
        waitingForClient = false;
        idle.refresh();
        // The event loop turns after each piece (a few ms of work at most, engine/line-stream.ts). Input
        // already buffered is read through promise callbacks, which run before any I/O: without a turn,
        // six streams that flood lines held the loop for 300 ms at a time (test/hostile-load.test.ts).
        await nextTurn();
      }
    }
    const last = lines.end();
    if (last !== '') yield last;
  } catch (error) {
    // The client went away mid-stream: there is no one to answer.
    if (socket.destroyed || (request.destroyed && !request.complete)) return;
    if (!(error instanceof ProblemError)) throw error;
    // A coded stream that turns out corrupt: the lines before were answered; its problem is the last line,
    // and the connection closes once it is written, the rest of the body unread.
    response.once('finish', () => socket.destroySoon());
    yield answerText(problemOutcome(error.problem)) + '\n';
  } finally {
    stopping.removeEventListener('abort', shutdown);
    clearTimeout(idle);
    clearTimeout(total);
    exemptFromRequestTimeout(socket, false);
  }
}
