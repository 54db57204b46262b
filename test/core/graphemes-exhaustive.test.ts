// Every code point against Intl.Segmenter: the checks that the grapheme fast path is exact for the
// whole of Unicode. Seconds of CPU, so in test:quick and npm test, not in the unit tier
// (npm run test:unit), whose table-driven and property tests in string-split.test.ts cover the rules.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SIMPLE_RANGES } from '../../src/core/graphemes.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const wholeStringSegments = (text: string): string[] => Array.from(segmenter.segment(text), (s) => s.segment);

describe('splitGraphemes over every code point', () => {
  test('every SIMPLE_RANGES character has a boundary before and after it, whatever the context', () => {
    // The fast path only splits between two SIMPLE characters, so each one is tried against itself
    // and one of each kind in the list (Other, Hangul LV, Hangul LVT), and after the contexts that
    // join a following character by a longer rule (GB11 ZWJ, GB9c virama, GB12 regional indicator).
    // Hangul jamo are not in the list, so a syllable never meets one on the fast path.
    const before = ['a', '中', '가', '각', '👍\u200d', 'क्', '🇸'];
    const after = ['a', '中', '가', '각'];
    for (const [first, last] of SIMPLE_RANGES) {
      for (let unit = first; unit <= last; unit++) {
        const c = String.fromCharCode(unit);
        const failures = [
          wholeStringSegments(c + c).length === 2,
          ...before.map((b) => wholeStringSegments(b + c).at(-1) === c),
          ...after.map((a) => wholeStringSegments(c + a)[0] === c),
        ];
        if (failures.includes(false)) assert.fail(`U+${unit.toString(16)} joins a neighbour`);
      }
    }
  });

  test('every Extend character joins what precedes it, and every pictograph starts a cluster after a SIMPLE, Extend or pictograph character', () => {
    for (let point = 0; point < 0x110000; point++) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const c = String.fromCodePoint(point);
      if (/^[\p{Grapheme_Extend}\p{Emoji_Modifier}]$/u.test(c)) {
        for (const base of ['a', '中', '👍', 'e\u0301']) {
          if (wholeStringSegments(base + c).length !== 1) assert.fail(`U+${point.toString(16)} does not join ${JSON.stringify(base)}`);
        }
      }
      if (/^\p{Extended_Pictographic}$/u.test(c)) {
        for (const before of ['a', '中', 'e\u0301', '👍🏽', '©']) {
          if (wholeStringSegments(before + c).at(-1) !== c) assert.fail(`U+${point.toString(16)} joins ${JSON.stringify(before)}`);
        }
        if (wholeStringSegments(`${c}a`)[0] !== c) assert.fail(`U+${point.toString(16)} joins what follows`);
      }
    }
  });
});
