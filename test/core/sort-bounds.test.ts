import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sort, type JsonValue } from '../../src/core/index.js';
import { cpuMillis } from '../cpu-time.js';

// Pathological inputs at the default SORT_MAX_LENGTH stay within the bounds the README states:
// 2 s of CPU (3 s for a million objects, each canonicalized once) and a few hundred MB.
const N = 1_000_000;
const CASES: Array<[string, () => JsonValue[], number]> = [
  ['equal numbers', () => new Array<number>(N).fill(7), 2000],
  ['sorted numbers', () => Array.from({ length: N }, (_, i) => i), 2000],
  ['reverse-sorted numbers', () => Array.from({ length: N }, (_, i) => N - i), 2000],
  ['equal strings', () => new Array<string>(N).fill('same'), 2000],
  ['reverse-sorted strings', () => Array.from({ length: N }, (_, i) => `s${String(N - i).padStart(7, '0')}`), 2000],
  ['mixed types', () => Array.from({ length: N }, (_, i) => [i, `s${i}`, null, true, [i % 7], { k: i % 13 }][i % 6] as JsonValue), 2000],
  ['equal objects', () => Array.from({ length: N }, () => ({ a: 1, b: [2] })), 3000],
];

for (const [name, make, limitMs] of CASES) {
  test(`a million ${name} sort within ${limitMs / 1000} s of CPU and 400 MB`, async () => {
    const input = make();
    const heapBefore = process.memoryUsage().heapUsed;
    let sorted: JsonValue[] = [];
    const elapsed = await cpuMillis(() => (sorted = sort(input)));
    const grown = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    assert.equal(sorted.length, N);
    assert.ok(elapsed < limitMs, `${elapsed.toFixed(0)} ms`);
    assert.ok(grown < 400, `${grown.toFixed(0)} MB`);
  });
}
