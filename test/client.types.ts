// Type tests of the client, checked by `npm run typecheck` (never run): each `@ts-expect-error` line
// must be a type error, so a method whose input or output type degrades (to `any` or `unknown`, or a
// wider union) makes the typecheck fail. The types come from the TypeBox schemas (src/client/index.ts).
import type { Static } from 'typebox';
import { createClient, type Answer, type Operations } from '../packages/client/src/index.js';
import type { OPERATIONS } from '../src/operations/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(): T | undefined => undefined;

// The client's types are generated from the declarations (scripts/client-operations.ts): each input and
// answer is the TypeBox schema's static type, and the typecheck fails when one drifts from it.
type Declared = typeof OPERATIONS;
type Drift = {
  [Id in keyof Declared]: [Equal<Operations[Id]['input'], Static<Declared[Id]['body']>>, Equal<Operations[Id]['output'], Static<Declared[Id]['result']>>];
}[keyof Declared];
expectType<Equal<Drift, [true, true]>>();

export async function clientTypes(): Promise<void> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:1' });

  const sorted: unknown[] = (await client.sort({ input: [3, 'a'], order: 'desc', locale: 'en' })).sortedArray;
  // @ts-expect-error order is "asc" or "desc"
  await client.sort({ input: [], order: 'down' });
  // @ts-expect-error input is an array
  await client.sort({ input: 'abc' });
  // @ts-expect-error the answer is { sortedArray }
  void (await client.sort({ input: [] })).ret;

  const even: boolean = (await client.isEven({ input: '9007199254740993' })).ret;
  // @ts-expect-error a number or a numeric string
  await client.isOdd({ input: true });
  // @ts-expect-error ret is a boolean
  const evenText: string = (await client.isEven({ input: 2 })).ret;
  // @ts-expect-error the body's field is input
  await client.isEven({ number: 2 });

  const byPath: boolean = (await client.isOddByPath({ number: '7' })).ret;
  // @ts-expect-error a path segment is a string
  await client.isEvenByPath({ number: 7 });
  // @ts-expect-error only operations with a GET form have a ByPath method
  await client.sortByPath({ number: '1' }); // eslint-disable-line @typescript-eslint/no-unsafe-call

  const isNumber: boolean = (await client.isNumber({ input: { any: 'value' } })).ret;
  const canonical: string = (await client.toString({ input: [1, { b: 2 }] })).ret;
  // @ts-expect-error ret is a string
  const canonicalNumber: number = (await client.toString({ input: 1 })).ret;

  const pieces: string[] = (await client.stringSplit({ input: { string: 'a,b', seperator: ',' } })).ret;
  // @ts-expect-error input.string is required
  await client.stringSplit({ input: { seperator: ',' } });
  // @ts-expect-error the separator is a string
  await client.stringSplit({ input: { string: 'a', separator: 1 } });

  const legacy = await client.legacyIsOdd({ number: 9 });
  expectType<Equal<typeof legacy.isOdd, boolean>>();
  expectType<Equal<typeof legacy.number, number | string>>();
  // @ts-expect-error legacyIsOdd answers isOdd, not isEven
  void legacy.isEven;
  const legacySorted: unknown[] = (await client.legacySort({ array: [2, 1] })).sortedArray;
  // @ts-expect-error the earlier revision's field is array
  await client.legacySort({ input: [2, 1] });

  const [first, second] = await client.batch([
    { operation: 'isEven', input: 4 },
    { operation: 'sort', input: [2, 1] },
  ]);
  expectType<Equal<typeof first, Answer<'isEven'>>>();
  void first;
  if ('result' in second) expectType<Equal<typeof second.result, Operations['sort']['output']>>();
  // @ts-expect-error a batch carries current operations only
  await client.batch([{ operation: 'legacySort', array: [] }]);
  // @ts-expect-error each item is its operation's body
  await client.batch([{ operation: 'isEven', input: [] }]);

  for await (const answer of client.stream([{ operation: 'isOdd', input: 1 }, '{"operation":"isEven","input":2}'])) {
    if ('result' in answer) expectType<Equal<typeof answer.status, 200>>();
  }
  void [sorted, even, evenText, byPath, isNumber, canonical, canonicalNumber, pieces, legacySorted];
}
