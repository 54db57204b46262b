import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InputError, toString, type JsonValue } from '../../src/core/index.js';

const JCS = new URL('../fixtures/jcs/', import.meta.url);

/** Reads the IEEE-754 double whose bit pattern is `hex` (1 to 16 hex digits). */
function doubleFromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('toString', () => {
  describe('RFC 8785 test vectors (test/fixtures/jcs)', () => {
    for (const file of readdirSync(new URL('input/', JCS))) {
      test(`input/${file} gives output/${file} exactly`, () => {
        const input = JSON.parse(readFileSync(new URL(`input/${file}`, JCS), 'utf8')) as JsonValue;
        assert.equal(toString(input), readFileSync(new URL(`output/${file}`, JCS), 'utf8'));
      });
    }
    for (const file of ['es6-sample.txt', 'es6-static.txt']) {
      for (const line of readFileSync(new URL(`numbers/${file}`, JCS), 'utf8')
        .split('\n')
        .filter(Boolean)) {
        const [hex, expected] = line.split(',') as [string, string];
        const value = doubleFromBits(hex);
        if (!Number.isFinite(value)) continue; // NaN and ±Infinity have no JSON form: refused below
        test(`numbers/${file}: bits ${hex} give ${expected}`, () => assert.equal(toString(value), expected));
      }
    }
  });

  const CASES: Array<[JsonValue, string]> = [
    ['héllo', 'héllo'],
    ['', ''],
    ['\ud800 lone surrogates pass through a plain string', '\ud800 lone surrogates pass through a plain string'],
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    [0.1, '0.1'],
    [-0, '0'],
    [1.0, '1'],
    [5e-324, '5e-324'],
    [true, 'true'],
    [false, 'false'],
    [null, 'null'],
    [[], '[]'],
    [{}, '{}'],
    [[1, 'a', null, [true]], '[1,"a",null,[true]]'],
    [{ b: 2, a: 1, A: 0, '': -1 }, '{"":-1,"A":0,"a":1,"b":2}'],
    [{ '\u{1F600}': 1, '\uFF01': 2 }, '{"😀":1,"！":2}'], // UTF-16 code unit order: U+D83D sorts before U+FF01
    [{ 10: 'ten', 9: 'nine', a: 'a' }, '{"10":"ten","9":"nine","a":"a"}'],
    [JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}') as JsonValue, '{"__proto__":{"polluted":true},"constructor":{"prototype":1}}'],
    [{ s: '\u0000\u001f"\\/\u007f\u2028' }, '{"s":"\\u0000\\u001f\\"\\\\/\u007f\u2028"}'],
  ];
  for (const [value, expected] of CASES) {
    test(`${JSON.stringify(value)} becomes ${JSON.stringify(expected)}`, () => assert.equal(toString(value), expected));
  }

  test('a number beyond the range of a double (1e400 parses to Infinity) is refused', () => {
    assert.throws(
      () => toString(Infinity),
      (e: unknown) => e instanceof InputError && e.path.length === 0,
    );
    assert.throws(
      () => toString({ a: [1, -Infinity] }),
      (e: unknown) => e instanceof InputError && e.path.join('/') === 'a/1',
    );
  });

  test('a lone surrogate inside an array or object is refused: RFC 8785 takes I-JSON only', () => {
    assert.throws(
      () => toString(['\udc00']),
      (e: unknown) => e instanceof InputError && /lone surrogate/.test(e.message) && e.path[0] === 0,
    );
    assert.throws(
      () => toString({ '\ud800': 1 }),
      (e: unknown) => e instanceof InputError && e.path[0] === '\ud800',
    );
  });

  test('the object keeps no trace of the canonicalization: prototypes are untouched', () => {
    toString(JSON.parse('{"__proto__":{"polluted":true}}') as JsonValue);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('property: toString of a string is the string itself', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => assert.equal(toString(s), s)));
  });

  test('property: a string inside a value is written exactly as JSON.stringify writes it, any UTF-16 code units', () => {
    const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
    fc.assert(
      fc.property(fc.string({ unit: codeUnit }), (s) => {
        if (s.isWellFormed()) assert.equal(toString([s]), `[${JSON.stringify(s)}]`);
        else assert.throws(() => toString([s]), /lone surrogate/);
      }),
      { numRuns: 5000 },
    );
    for (const s of ['plain', 'a"b', 'a\\b', '\u0000', '\u001f', '\u007f', '\u2028', '😀', 'é✓']) assert.equal(toString([s]), `[${JSON.stringify(s)}]`, s);
  });

  test('property: the text is that of a plain recursive writer, keys that are indexes, __proto__ and escapes included', () => {
    // The definition written out once more, slowly: canonicalJson writes through JSON.stringify
    // when it can, and this catches any value where that would differ.
    const reference = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
      if (value !== null && typeof value === 'object') {
        const keys = Object.keys(value).sort();
        return `{${keys.map((key) => `${JSON.stringify(key)}:${reference((value as Record<string, unknown>)[key])}`).join(',')}}`;
      }
      return JSON.stringify(value);
    };
    const key = fc.oneof(fc.string(), fc.constantFrom('0', '1', '10', '9', '01', '4294967295', '-1', '__proto__', 'toJSON', '\\ud800', 'b', 'a'));
    const { value } = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.oneof(fc.string(), fc.constant('text \\ud83d\\ude00'), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
        fc.array(tie('value')),
        fc.dictionary(key, tie('value')),
      ),
    }));
    fc.assert(
      fc.property(value, (v) => assert.equal(toString(v as JsonValue), typeof v === 'string' ? v : reference(v))),
      { numRuns: 2000 },
    );
  });

  test('an object with a toJSON method is written by its own keys, as any object: JSON.stringify would call it', () => {
    assert.equal(toString({ a: new Date(0) } as unknown as JsonValue), '{"a":{}}');
    assert.equal(toString([{ toJSON: 1, b: 2 }]), '[{"b":2,"toJSON":1}]');
  });

  test('property: the canonical text parses back to an equal value, and equal values give one text', () => {
    fc.assert(
      fc.property(fc.jsonValue({ noUnicodeString: false }), (value) => {
        if (typeof value === 'string') return;
        const text = toString(value as JsonValue);
        assert.deepEqual(JSON.parse(text), JSON.parse(JSON.stringify(value)));
        const reordered = JSON.parse(JSON.stringify(value), (_key, v: unknown) =>
          v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
        ) as JsonValue;
        assert.equal(toString(reordered), text);
      }),
    );
  });
});
