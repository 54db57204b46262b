import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InputError, canonicalJson, compareCodePoints, sort, type JsonValue, type SortOptions } from '../../src/core/index.js';

const CASES: Array<[string, JsonValue[], SortOptions, JsonValue[]]> = [
  ['empty', [], {}, []],
  ['numbers numerically, not as text', [10, 9, 1, 100, -2], {}, [-2, 1, 9, 10, 100]],
  ['doubles', [1.5, -0.25, 1e21, 5e-324, -1e-7], {}, [-0.25, -1e-7, 5e-324, 1.5, 1e21]],
  ['duplicates kept', [3, 1, 3, 1], {}, [1, 1, 3, 3]],
  ['-0 comes back as 0 and equals 0', [0, -0, -1], {}, [-1, 0, 0]],
  ['strings by code point, upper case first', ['b', 'a', 'B', 'A', 'aa', ''], {}, ['', 'A', 'B', 'a', 'aa', 'b']],
  ['strings by code point, not UTF-16 unit: U+FF01 before 😀', ['😀', '\uFF01', '\uE000', 'z'], {}, ['z', '\uE000', '\uFF01', '😀']],
  ['accents by code point', ['é', 'f', 'e'], {}, ['e', 'f', 'é']],
  ['locale collation', ['é', 'f', 'e', 'E'], { locale: 'en' }, ['e', 'E', 'é', 'f']],
  ['Swedish puts ä after z', ['ä', 'z', 'a'], { locale: 'sv' }, ['a', 'z', 'ä']],
  ['German puts ä with a', ['ä', 'z', 'a'], { locale: 'de' }, ['a', 'ä', 'z']],
  ['mixed types by type first', [{ a: 1 }, [2], 'x', 1, true, false, null], {}, [null, false, true, 1, 'x', [2], { a: 1 }]],
  ['arrays element by element, a prefix first', [[1, 2], [1], [0, 5], [], [1, 'a']], {}, [[], [0, 5], [1], [1, 2], [1, 'a']]],
  ['objects by canonical text', [{ b: 1 }, { a: 2 }, { a: 1, c: 0 }], {}, [{ a: 1, c: 0 }, { a: 2 }, { b: 1 }]],
  ['descending numbers', [1, 3, 2], { order: 'desc' }, [3, 2, 1]],
  ['descending strings', ['a', 'c', 'b'], { order: 'desc' }, ['c', 'b', 'a']],
  ['descending mixed', [null, 'x', 1], { order: 'desc' }, ['x', 1, null]],
  ['explicit ascending', [2, 1], { order: 'asc' }, [1, 2]],
];

describe('sort', () => {
  for (const [name, input, options, expected] of CASES) {
    test(`${name}: ${JSON.stringify(input)} ${JSON.stringify(options)} → ${JSON.stringify(expected)}`, () => {
      const copy = structuredClone(input);
      assert.deepEqual(sort(input, options), expected);
      assert.deepEqual(input, copy, 'the input is not mutated');
    });
  }

  test('stable: equal objects keep their input order, ascending and descending', () => {
    const first = { b: 1, a: 2 };
    const second = { a: 2, b: 1 }; // same canonical text
    assert.deepEqual(
      sort([second, 0, first]).map((v) => (v === first ? 'first' : v === second ? 'second' : v)),
      [0, 'second', 'first'],
    );
    const desc = sort(['z', first, second], { order: 'desc' });
    assert.equal(desc[0], first);
    assert.equal(desc[1], second);
    assert.equal(desc[2], 'z');
  });

  test('stable under a collator that calls distinct strings equal, in both orders', () => {
    const composed = '\u00e9';
    const decomposed = 'e\u0301';
    assert.deepEqual(sort([decomposed, 'z', composed], { locale: 'en' }), [decomposed, composed, 'z']);
    assert.deepEqual(sort([decomposed, 'z', composed], { locale: 'en', order: 'desc' }), ['z', decomposed, composed]);
  });

  test('refuses a number beyond the double range, naming where it is', () => {
    assert.throws(
      () => sort([1, Infinity]),
      (e: unknown) => e instanceof InputError && e.path[0] === 1,
    );
    assert.throws(
      () => sort(['a', { x: [-Infinity] }]),
      (e: unknown) => e instanceof InputError && e.path.join('/') === '1/x/0',
    );
  });

  test('refuses a malformed locale tag and an unknown order', () => {
    assert.throws(() => sort(['a'], { locale: 'not a tag!' }), /BCP 47/);
    assert.throws(() => sort([1], { order: 'up' as 'asc' }), /order/);
  });

  const jsonValue = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>;
  const isOrdered = (values: JsonValue[], order: 'asc' | 'desc'): boolean => {
    const sign = order === 'asc' ? 1 : -1;
    return values.every((v, i) => i === 0 || sign * compareAny(values[i - 1] as JsonValue, v) <= 0);
  };

  for (const order of ['asc', 'desc'] as const) {
    test(`property (${order}): the result is an ordered permutation of the input, for numbers, strings and mixed values`, () => {
      fc.assert(
        fc.property(
          fc.oneof(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true })), fc.array(fc.string({ unit: 'grapheme' })), fc.array(jsonValue)),
          (input) => {
            const sorted = sort(input, { order });
            assert.ok(isOrdered(sorted, order));
            const count = (values: JsonValue[]) => {
              const counts = new Map<string, number>();
              for (const v of values) {
                const key = canonicalJson(v, 'escape');
                counts.set(key, (counts.get(key) ?? 0) + 1);
              }
              return counts;
            };
            assert.deepEqual(count(sorted), count(input));
          },
        ),
      );
    });
  }

  test('property: code point order matches comparing the strings code point by code point', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        const expected = Math.sign(
          cmpArrays(
            [...a].map((c) => c.codePointAt(0) as number),
            [...b].map((c) => c.codePointAt(0) as number),
          ),
        );
        assert.equal(Math.sign(compareCodePoints(a, b)), expected);
      }),
    );
  });
});

/** An independent statement of the total order of docs/behaviour.md §2.5, to check the implementation against. */
function compareAny(a: JsonValue, b: JsonValue): number {
  const rank = (v: JsonValue) =>
    v === null ? 0 : v === false ? 1 : v === true ? 2 : typeof v === 'number' ? 3 : typeof v === 'string' ? 4 : Array.isArray(v) ? 5 : 6;
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string')
    return cmpArrays(
      [...a].map((c) => c.codePointAt(0) as number),
      [...(b as string)].map((c) => c.codePointAt(0) as number),
    );
  if (Array.isArray(a)) {
    const other = b as JsonValue[];
    for (let i = 0; i < Math.min(a.length, other.length); i++) {
      const d = compareAny(a[i] as JsonValue, other[i] as JsonValue);
      if (d !== 0) return d;
    }
    return a.length - other.length;
  }
  if (a !== null && typeof a === 'object') return compareAny(canonicalJson(a, 'escape'), canonicalJson(b, 'escape'));
  return 0;
}

function cmpArrays(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}
