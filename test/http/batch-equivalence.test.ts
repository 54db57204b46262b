import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CURRENT_OPERATION_IDS } from '../../src/operations/index.js';
import { build, post } from './helper.js';

// Issue 27: an operation answers the same alone, in a batch and in a stream; problems differ only
// in where their pointers are rooted (`/operations/N` in a batch, the line in a stream) and in the
// words for the item as a whole. A batch item's problem is the single endpoint's once its pointers
// are re-rooted, its words untouched: the client re-roots them without knowing any sentence.

const SPECIAL_NUMBERS = ['-0', '4.0', '4.000000000000000000001', '1e400', '1E2', '9007199254740993', '0.1e1', '1'.repeat(10_001), '-12'];
const SPECIAL_KEYS = ['__proto__', 'constructor', 'input', 'inptu', 'string', 'seperator', 'separator', 'order', 'locale'];
const key = fc.oneof(
  fc.constantFrom(...SPECIAL_KEYS),
  fc.string({ maxLength: 6 }).filter((k) => k !== 'operation'),
);
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(...SPECIAL_NUMBERS, 'null', 'true', '""', '"0x1F"', '" 12 "', '"\\ud800"', '"👍🏽é"', '"a,b,,c"'),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 3 }).map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  ),
})).value;
// Bodies of a single endpoint, each a JSON object, so that each is also an item with "operation" added.
const body = fc.oneof(
  jsonText.map((input) => `{"input":${input}}`),
  fc.constantFrom(...SPECIAL_NUMBERS).map((n) => `{"input":${n}}`),
  fc.tuple(jsonText, jsonText).map(([string, seperator]) => `{"input":{"string":${string},"seperator":${seperator}}}`),
  fc
    .tuple(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 6 }), fc.constantFrom('"asc"', '"desc"', '1'), fc.constantFrom('"en"', '"sv"', '"not a tag"'))
    .map(([input, order, locale]) => `{"input":${JSON.stringify(input)},"order":${order},"locale":${locale}}`),
  fc.array(fc.tuple(key, jsonText), { maxLength: 3 }).map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  fc.integer({ min: 120, max: 140 }).map((depth) => `{"input":${'['.repeat(depth)}${']'.repeat(depth)}}`),
);
const operation = fc.constantFrom(...CURRENT_OPERATION_IDS);

interface Problem {
  status: number;
  detail: string;
  errors?: Array<{ pointer: string; detail: string }>;
}
type Answer = { status: number; result?: unknown; problem?: Problem };

/** A problem with its root words and pointer prefix taken out: what is left must be equal. */
function unrooted(problem: Problem, root: RegExp, rootWords: RegExp): Problem {
  const words = (text: string) =>
    text
      .replace(root, '')
      .replace(rootWords, 'ITEM')
      .replace(/the (body|item) has/g, 'ITEM has');
  return { ...problem, detail: words(problem.detail), errors: problem.errors?.map((e) => ({ pointer: e.pointer.replace(root, ''), detail: words(e.detail) })) };
}

test('every operation answers alike alone, in a batch and in a stream', async (t) => {
  const app = await build(t, { maxDepth: 128 });
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(operation, body), { minLength: 1, maxLength: 6 }), async (cases) => {
      const items = cases.map(([id, text]) => (text === '{}' ? `{"operation":"${id}"}` : `{"operation":"${id}",${text.slice(1)}`));
      const batch = await post(app, '/api/batch', `{"operations":[${items.join(',')}]}`);
      assert.equal(batch.statusCode, 200, batch.body);
      const batchAnswers = batch.json<{ answers: Answer[] }>().answers;
      const stream = await app.inject({ method: 'POST', url: '/api/stream', headers: { 'content-type': 'application/x-ndjson' }, payload: items.join('\n') });
      assert.equal(stream.statusCode, 200, stream.body);
      const streamAnswers = stream.body
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Answer);
      assert.equal(batchAnswers.length, cases.length);
      assert.equal(streamAnswers.length, cases.length);
      for (const [index, [id, text]] of cases.entries()) {
        const single = await post(app, `/api/${id}`, text);
        const inBatch = batchAnswers[index] as Answer;
        const inStream = streamAnswers[index] as Answer;
        const context = `${id} ${text.slice(0, 200)}`;
        assert.equal(inBatch.status, single.statusCode, context);
        assert.equal(inStream.status, single.statusCode, context);
        if (single.statusCode === 200) {
          assert.deepEqual(inBatch.result, single.json(), context);
          assert.deepEqual(inStream.result, single.json(), context);
        } else {
          const expected = unrooted(single.json<Problem & { type: string; title: string }>(), /^$/, /The request body/g);
          const batchRoot = new RegExp(`/operations/${index}(?=/)`, 'g');
          assert.deepEqual(unrooted(inBatch.problem as Problem, batchRoot, new RegExp(`/operations/${index}\\b`, 'g')), expected, context);
          assert.deepEqual(unrooted(inStream.problem as Problem, /^$/, /The line/g), expected, context);
          const itemRoot = `/operations/${index}`;
          const reRooted = { ...inBatch.problem, errors: inBatch.problem?.errors?.map((e) => ({ ...e, pointer: e.pointer.slice(itemRoot.length) })) };
          const sameWords = (problem: Problem, item: string) => JSON.stringify(problem).replaceAll(`"${item} `, '"ITEM ').replaceAll(`; ${item} `, '; ITEM ');
          assert.equal(sameWords(reRooted as Problem, itemRoot), sameWords(single.json<Problem>(), 'The request body'), context);
        }
      }
    }),
    { numRuns: 150 },
  );
});
