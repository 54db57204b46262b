import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { LimitError, splitGraphemes, stringSplit } from '../../src/core/index.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const wholeStringSegments = (text: string): string[] => Array.from(segmenter.segment(text), (s) => s.segment);

const CASES: Array<[string, string | undefined, string[]]> = [
  ['a,b,,c', ',', ['a', 'b', '', 'c']],
  [',a,', ',', ['', 'a', '']],
  ['a.b', '.', ['a', 'b']], // literal: "." is no regular expression
  ['a.*b', '.*', ['a', 'b']],
  ['a$b', '$', ['a', 'b']],
  ['a b  c', ' ', ['a', 'b', '', 'c']],
  ['abc', 'abc', ['', '']],
  ['abc', 'x', ['abc']],
  ['a::b::c', '::', ['a', 'b', 'c']],
  ['', ',', ['']],
  ['', '', []],
  ['abc', undefined, ['abc']],
  ['', undefined, ['']],
  ['abc', '', ['a', 'b', 'c']],
  ['👍🏽e\u0301', '', ['👍🏽', 'e\u0301']],
  ['👨‍👩‍👧‍👦!', '', ['👨‍👩‍👧‍👦', '!']],
  ['🇸🇪🇫🇮🇸', '', ['🇸🇪', '🇫🇮', '🇸']],
  ['\r\n\n\r', '', ['\r\n', '\n', '\r']],
  ['한국어', '', ['한', '국', '어']],
  ['\u1100\u1161\u11a8', '', ['\u1100\u1161\u11a8']], // conjoining jamo make one syllable
  ['क्षि', '', ['क्षि']], // GB9c: a Devanagari conjunct
  ['😀x', '😀', ['', 'x']],
  ['a\ud800b', '', ['a', '\ud800', 'b']],
];

describe('stringSplit with maxParts', () => {
  test('exactly maxParts parts are returned; one more throws LimitError, by a separator or into graphemes', () => {
    assert.deepEqual(stringSplit('a,b', ',', { maxParts: 2 }), ['a', 'b']);
    assert.throws(
      () => stringSplit('a,b,c', ',', { maxParts: 2 }),
      (error: unknown) => error instanceof LimitError && error.message === 'splits into more than 2 parts',
    );
    assert.deepEqual(stringSplit('👍🏽é', '', { maxParts: 2 }), ['👍🏽', 'é']);
    assert.throws(() => stringSplit('👍🏽é!', '', { maxParts: 2 }), LimitError);
    assert.deepEqual(stringSplit('abc', undefined, { maxParts: 1 }), ['abc']);
  });
  test('a string far over the limit is refused without splitting it all', () => {
    // Built and flattened before the clock starts: on a loaded machine making 20 MB took part of the 200 ms.
    const text = 'x'.repeat(20_000_000);
    assert.equal(text.charCodeAt(text.length - 1), 120);
    const started = performance.now();
    assert.throws(() => stringSplit(text, '', { maxParts: 10 }), LimitError);
    assert.ok(performance.now() - started < 200);
  });
});

describe('stringSplit', () => {
  for (const [string, separator, expected] of CASES) {
    test(`${JSON.stringify(string)} split by ${JSON.stringify(separator)} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(stringSplit(string, separator), expected);
    });
  }

  test('property: joining the parts with the separator gives back the string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), (string, separator) => {
        assert.equal(stringSplit(string, separator).join(separator), string);
      }),
    );
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (string) => assert.equal(stringSplit(string, '').join(''), string)));
  });

  test('property: a non-empty separator splits as String.prototype.split does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }), (string, separator) => {
        assert.deepEqual(stringSplit(string, separator), string.split(separator));
      }),
    );
  });
});

describe('splitGraphemes', () => {
  // Pieces that exercise every rule of UAX #29: joiners, modifiers, flags, conjuncts, jamo, controls.
  const piece = fc.constantFrom(
    'a',
    'Z',
    ' ',
    '1',
    '\r',
    '\n',
    '\t',
    '\u0301',
    '\u200d',
    '\ufe0f',
    '👍',
    '🏽',
    '👨',
    '❤',
    '🇸',
    '🇪',
    'क',
    '्',
    'ष',
    'ि',
    '\u1100',
    '\u1161',
    '\u11a8',
    '가',
    '각',
    'é',
    '中',
    'ア',
    '\u3099',
    '\u0e33',
    '\u0600',
    '\ud800',
    '\udc00',
    'Ω',
    'ж',
    '©',
    '\u0903',
    '\u{1F3FB}',
    '\u{E0067}',
    '\u{E007F}',
    '\u{1F3F4}',
    '\u20e3',
    '#',
    'ส',
    'ั',
    '\u0e40',
    'ا',
    '\u064b',
    '\u200c',
    '\u{E0100}',
    '\u{110BD}',
    '\u0d4e',
  );
  const text = fc.array(piece, { maxLength: 60 }).map((pieces) => pieces.join(''));

  for (const window of [2, 3, 8, 256]) {
    test(`property: windows of ${window} give exactly what Intl.Segmenter gives on the whole string`, () => {
      fc.assert(
        fc.property(text, (s) => assert.deepEqual(splitGraphemes(s, window), wholeStringSegments(s))),
        { numRuns: 500 },
      );
    });
  }

  test('property: the same on arbitrary Unicode text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => assert.deepEqual(splitGraphemes(s, 4), wholeStringSegments(s))));
  });
});
