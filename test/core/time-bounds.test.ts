// The core's time bounds (docs/behaviour.md §2): linear in the input, and well under a second at
// the sizes the limits allow. CPU time, not wall time, so the other core's work does not move them.
// In test:quick and npm test, not in the unit tier (npm run test:unit), as sort-bounds.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isNumber, isOdd, sort, splitGraphemes } from '../../src/core/index.js';
import { cpuMillis } from '../cpu-time.js';

describe('isNumber', () => {
  test('a string of a million digits followed by a letter answers in linear time', async () => {
    const elapsed = await cpuMillis(() => {
      assert.equal(isNumber(`${'1'.repeat(1_000_000)}x`), false);
      assert.equal(isNumber(`${'1'.repeat(1_000_000)}.${'2'.repeat(1_000_000)}e`), false);
    });
    assert.ok(elapsed < 1000, `${elapsed} ms`);
  });
});

describe('parity', () => {
  test('a million-digit integer is answered in linear time', async () => {
    const elapsed = await cpuMillis(() => assert.equal(isOdd('7'.repeat(1_000_000)), true));
    assert.ok(elapsed < 1000, `${elapsed} ms`);
  });
});

describe('sort', () => {
  test('1,000,000 numbers sort in well under two seconds', async () => {
    const input = Array.from({ length: 1_000_000 }, (_, i) => ((i * 7919) % 1_000_003) / 3);
    let sorted: number[] = [];
    const elapsed = await cpuMillis(() => (sorted = sort(input) as number[]));
    assert.ok(elapsed < 2000, `${elapsed} ms`);
    for (let i = 1; i < sorted.length; i++) assert.ok((sorted[i - 1] as number) <= (sorted[i] as number));
  });
});

describe('splitGraphemes', () => {
  // docs/behaviour.md §2.4 stringSplit: splitting is linear, and 1 MiB split by "" answers in well under a second.
  const MIB = 1024 * 1024;
  const PATTERNS: Array<[string, string]> = [
    ['ASCII', 'The quick brown fox. '],
    ['emoji with skin tones', '👍🏽'],
    ['CJK', '中文字'],
    ['combining accents', 'e\u0301'],
    ['flags', '🇸🇪'],
    ['accents between spaces', 'e\u0301 '],
    ['emoji between spaces', '👍 '],
    ['Devanagari', 'नमस्ते '],
    ['Thai', 'สวัสดี '],
    ['mixed scripts and emoji', '👍🏽 héllo wörld 中文 '],
  ];
  const bestOfTwo = async (text: string): Promise<number> => {
    let best = Infinity;
    for (let run = 0; run < 2; run++) best = Math.min(best, await cpuMillis(() => assert.equal(splitGraphemes(text).join(''), text)));
    return best;
  };
  for (const [name, unit] of PATTERNS) {
    test(`${name}: 4x the text takes about 4x the time (linear), 1 MiB well under a second`, async () => {
      const quarter = await bestOfTwo(unit.repeat(Math.ceil(MIB / 4 / unit.length)));
      const whole = await bestOfTwo(unit.repeat(Math.ceil(MIB / unit.length)));
      // Linear growth is 4x and quadratic 16x; garbage collection makes small timings noisy.
      assert.ok(whole < 8 * quarter + 150, `256 KiB: ${quarter.toFixed(0)} ms, 1 MiB: ${whole.toFixed(0)} ms`);
      assert.ok(whole < 1000, `1 MiB: ${whole.toFixed(0)} ms`);
    });
  }
  test('a single cluster of a million combining marks is linear too', async () => {
    const elapsed = await cpuMillis(() => assert.equal(splitGraphemes(`a${'\u0301'.repeat(MIB)}`).length, 1));
    assert.ok(elapsed < 1000, `${elapsed.toFixed(0)} ms`);
  });
});
