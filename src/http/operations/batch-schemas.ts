import { Type, type TSchema } from 'typebox';
import { CURRENT_OPERATION_IDS, type CurrentOperationId } from '../../operations/index.js';
import { itemSchema } from '../../engine/items.js';
import { SETTINGS } from '../../config.js';
import { nameOf, operationSchemas, ProblemSchema, referTo } from './schemas.js';

/**
 * The named shapes of the batch and the stream, for the OpenAPI document: one item per current
 * operation (its single endpoint's body with `operation` added, engine/items.ts), the item as a
 * `oneOf` discriminated by `operation`, each operation's answer with its typed result, the
 * problem answer, and the stream's last line when shutdown ends it. The engine validates items
 * with the same item schemas; these add only their names.
 */

const PATH = '#/components/schemas/';
const named = (id: string): string => `${id.charAt(0).toUpperCase()}${id.slice(1)}`;

/** One schema per current operation: `SortItem`, `IsEvenItem`, … */
const ITEM_SCHEMAS: ReadonlyMap<CurrentOperationId, TSchema> = new Map(
  CURRENT_OPERATION_IDS.map((id) => {
    const item = { ...itemSchema(id), $id: `${named(id)}Item` } as TSchema & { title?: string };
    // A reader shows a schema's title in place of its name; the name says it (`SortItem`).
    delete item.title;
    return [id, item];
  }),
);

const BatchItemSchema = {
  $id: 'BatchItem',
  description: 'An operation: its name in `operation`, beside the fields of its single endpoint’s body',
  oneOf: [...ITEM_SCHEMAS.values()].map(referTo),
  // The mapping is for the document's readers (generators narrow by it); no validator compiles
  // this schema: the engine checks the envelope, then each item by its own schema.
  discriminator: {
    propertyName: 'operation',
    mapping: Object.fromEntries([...ITEM_SCHEMAS].map(([id, schema]) => [id, `${PATH}${nameOf(schema)}`])),
  },
} as unknown as TSchema;

// A status as a schema: an integer (TypeBox's literal would say `number`), this one only.
const statusOf = <S extends number>(status: S) => Type.Unsafe<S>({ type: 'integer', enum: [status] });

// The current operations' results, each once (isEven, isOdd and isNumber share theirs).
const RESULTS = [...new Map(CURRENT_OPERATION_IDS.map((id) => [nameOf(operationSchemas(id).result), operationSchemas(id).result])).values()];

/** `{"status":200,"result":…}` for each kind of result: `SortAnswer`, `BooleanAnswer`, … */
const RESULT_ANSWERS = RESULTS.map((result) =>
  Type.Object(
    { status: statusOf(200), result: referTo(result) },
    { $id: `${nameOf(result).replace(/Result$/, '')}Answer`, description: `What the single endpoint answers with 200: ${nameOf(result)}` },
  ),
);

const ProblemAnswerSchema = Type.Object(
  {
    status: Type.Integer({ minimum: 400, maximum: 599, description: 'The status the single endpoint would answer' }),
    problem: referTo(ProblemSchema),
  },
  { $id: 'ProblemAnswer', description: 'The problem the single endpoint would answer' },
);

const ItemAnswerSchema = {
  $id: 'ItemAnswer',
  description: 'The answer to one operation: what its single endpoint answers with 200, or its problem',
  anyOf: [...RESULT_ANSWERS, ProblemAnswerSchema].map(referTo),
} as unknown as TSchema;

const PARITY_DETAIL = '/input must be an integer';
const BATCH_EXAMPLE = {
  operations: [
    { operation: 'isEven', input: 4 },
    { operation: 'sort', input: [3, 1, 2], order: 'desc' },
    { operation: 'isOdd', input: 1.5 },
    { operation: 'stringSplit', input: { string: 'a,b', seperator: ',' } },
  ],
};

export const BatchRequestSchema = {
  $id: 'BatchRequest',
  type: 'object',
  properties: {
    operations: {
      type: 'array',
      items: referTo(BatchItemSchema),
      description: `The operations, answered in this order; at most ${SETTINGS.batchMaxOperations.env} (${SETTINGS.batchMaxOperations.default} by default)`,
    },
  },
  required: ['operations'],
  'x-examples': { mixed: { summary: 'Several operations, one of them wrong', value: BATCH_EXAMPLE } },
} as unknown as TSchema;

export const BatchAnswerSchema = Type.Object(
  { answers: Type.Array(referTo(ItemAnswerSchema), { description: 'One per operation, in order' }) },
  {
    $id: 'BatchAnswer',
    // What the service answers BATCH_EXAMPLE (test/http/openapi.test.ts sends it).
    examples: [
      {
        answers: [
          { status: 200, result: { ret: true } },
          { status: 200, result: { sortedArray: [3, 2, 1] } },
          {
            status: 400,
            problem: {
              type: 'about:blank',
              title: 'Bad Request',
              status: 400,
              detail: PARITY_DETAIL,
              errors: [{ pointer: '/operations/2/input', detail: PARITY_DETAIL }],
            },
          },
          { status: 200, result: { ret: ['a', 'b'] } },
        ],
      },
    ],
  },
);

export const StreamLineSchema = {
  $id: 'StreamLine',
  description: 'One line of a stream: one operation, as a batch item, as a JSON object on a line of its own',
  ...referTo(BatchItemSchema),
} as unknown as TSchema;

const StreamShutdownLineSchema = Type.Object(
  {
    status: statusOf(503),
    problem: Type.Object(
      {
        ...ProblemSchema.properties,
        answered: Type.Integer({ minimum: 0, description: 'How many lines were answered: send the rest again, in a new stream' }),
        retryAfter: Type.Integer({ minimum: 0, description: 'Seconds to wait before sending them' }),
      },
      { description: 'RFC 9457 Problem Details, with where to resume' },
    ),
  },
  { $id: 'StreamShutdownLine', description: 'The last line of a stream that shutdown ended' },
);

export const StreamAnswerLineSchema = {
  $id: 'StreamAnswerLine',
  description:
    'One line of a stream’s answer, in the order of the lines: an operation’s answer, as in a batch; or the last line, when shutdown ended the stream',
  anyOf: [ItemAnswerSchema, StreamShutdownLineSchema].map(referTo),
} as unknown as TSchema;

/** Every named shape of the batch and the stream, in the order the document lists them. */
export const BATCH_SCHEMAS: readonly TSchema[] = [
  BatchRequestSchema,
  BatchItemSchema,
  ...ITEM_SCHEMAS.values(),
  BatchAnswerSchema,
  ItemAnswerSchema,
  ...RESULT_ANSWERS,
  ProblemAnswerSchema,
  StreamLineSchema,
  StreamAnswerLineSchema,
  StreamShutdownLineSchema,
];
