import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { collatorFor, isNumber, LimitError, stringSplit } from '../core/index.js';
import { parityOrProblem, sortedOrProblem, stringFormOrProblem, type Limits } from './answers.js';
import { fieldProblem, fromCore } from './problem.js';
import {
  AnyInputBodySchema,
  LegacyParityBodySchema,
  LegacySortBodySchema,
  LegacyToStringBodySchema,
  ParityBodySchema,
  SortBodySchema,
  StringSplitBodySchema,
} from './schemas.js';
import { LIMIT_TEXTS } from './limit-texts.js';

/**
 * What each operation with a JSON body does once its body is parsed and valid, free of any
 * framework: the routes call it on the event loop for small bodies, and the worker threads
 * (`offload-worker.ts`) for large ones, so both answer alike.
 */

/** An answer already written as JSON text (the legacy parity answers keep a number's every digit). */
/** The JSON bytes of an answer worked out in the worker threads: the route sends them as they are. */
export class OffloadedAnswer {
  constructor(readonly json: Buffer) {}
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export class JsonText {
  constructor(readonly text: string) {}
}

export interface AnswerContext {
  readonly limits: Limits;
  /** The JSON source text of the operation's `numberField`, when that member was a number. */
  readonly numberSource: string | undefined;
}

/** Which row of `PEAK_BYTES_PER_BODY_BYTE` (memory-estimates.ts) an operation's memory follows. */
export type MemoryProfile = 'sort' | 'parity' | 'isNumber' | 'toString' | 'stringSplit';

export interface BodyOperation<S extends TSchema = TSchema> {
  readonly body: S;
  /** A body member whose number must be read from its source text, not a rounded double. */
  readonly numberField?: string;
  readonly memory: MemoryProfile;
  readonly answer: (body: Static<S>, context: AnswerContext) => object | JsonText;
}

const operation = <S extends TSchema>(definition: BodyOperation<S>): BodyOperation<S> => definition;

const legacyParity = (name: 'isOdd' | 'isEven') =>
  operation({
    body: LegacyParityBodySchema,
    numberField: 'number',
    memory: 'parity',
    answer: ({ number }, { limits, numberSource }) => {
      const answer = parityOrProblem(name, number, numberSource, '/number', limits);
      // Written by hand so that a JSON number comes back with every digit it was sent with.
      const echoed = typeof number === 'number' && numberSource !== undefined ? numberSource : JSON.stringify(number);
      return new JsonText(`{"number":${echoed},"${name}":${answer}}`);
    },
  });

export const BODY_OPERATIONS = {
  sort: operation({
    body: SortBodySchema,
    memory: 'sort',
    answer: ({ input, order, locale }, { limits }) => {
      if (locale !== undefined) fromCore('/locale', () => collatorFor(locale));
      return { sortedArray: sortedOrProblem(input, '/input', limits, { order, locale }) };
    },
  }),
  isEven: operation({
    body: ParityBodySchema,
    numberField: 'input',
    memory: 'parity',
    answer: ({ input }, { limits, numberSource }) => ({ ret: parityOrProblem('isEven', input, numberSource, '/input', limits) }),
  }),
  isOdd: operation({
    body: ParityBodySchema,
    numberField: 'input',
    memory: 'parity',
    answer: ({ input }, { limits, numberSource }) => ({ ret: parityOrProblem('isOdd', input, numberSource, '/input', limits) }),
  }),
  isNumber: operation({ body: AnyInputBodySchema, memory: 'isNumber', answer: ({ input }) => ({ ret: isNumber(input) }) }),
  toString: operation({ body: AnyInputBodySchema, memory: 'toString', answer: ({ input }) => ({ ret: stringFormOrProblem(input, '/input') }) }),
  stringSplit: operation({
    body: StringSplitBodySchema,
    memory: 'stringSplit',
    answer: ({ input: { string, seperator, separator } }, { limits }) => {
      if (seperator !== undefined && separator !== undefined && seperator !== separator) {
        throw fieldProblem('/input/separator', 'differs from /input/seperator; send one of them, or both equal');
      }
      try {
        return { ret: stringSplit(string, seperator ?? separator, { maxParts: limits.stringSplitMaxParts }) };
      } catch (error) {
        if (error instanceof LimitError) throw fieldProblem('/input/string', LIMIT_TEXTS.splitParts(error.message, limits.stringSplitMaxParts), 413);
        throw error;
      }
    },
  }),
  legacySort: operation({ body: LegacySortBodySchema, memory: 'sort', answer: ({ array }, { limits }) => ({ sortedArray: sortedOrProblem(array, '/array', limits) }) }),
  legacyIsOdd: legacyParity('isOdd'),
  legacyIsEven: legacyParity('isEven'),
  legacyToString: operation({ body: LegacyToStringBodySchema, memory: 'toString', answer: ({ number }) => ({ ret: stringFormOrProblem(number, '/number') }) }),
} as const;

export type BodyOperationId = keyof typeof BODY_OPERATIONS;

/** Sends an operation's answer: JSON text as it is, an object through the route's serializer. */
export function sendAnswer(reply: FastifyReply, answer: object | JsonText): FastifyReply | object {
  return answer instanceof JsonText ? reply.type(JSON_CONTENT_TYPE).send(answer.text) : answer;
}

/** A route's answer worked out by the worker threads: sent as it is, before validation, which it has passed there. */
function sendOffloadedAnswer(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  if (request.body instanceof OffloadedAnswer) return void reply.type(JSON_CONTENT_TYPE).send(request.body.json);
  done();
}

/** Route options of a body operation: its config (admission, number source) and the hook for offloaded answers. */
export function bodyRouteOptions(operation: BodyOperationId) {
  return { config: { operation }, preValidation: sendOffloadedAnswer };
}
