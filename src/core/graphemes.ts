const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Characters per `Intl.Segmenter` call: small enough that its quadratic cost stays flat. */
export const DEFAULT_WINDOW = 256;

/** Certain boundaries in a row after which plain text is left to the fast path. */
const PLAIN_STRETCH = 4;

const CR = 13;
const LF = 10;

/**
 * BMP characters whose Grapheme_Cluster_Break is Other (or a precomposed Hangul syllable) and
 * which take part in no other multi-character rule (not Extended_Pictographic, Indic conjunct
 * consonant, Hangul jamo, Prepend, Extend or SpacingMark). Between two of them there is always a boundary (UAX #29 GB999).
 * test/core/string-split.test.ts checks every one against `Intl.Segmenter`.
 */
export const SIMPLE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x0020, 0x007e], // ASCII printable
  [0x00a0, 0x00a8],
  [0x00aa, 0x00ac],
  [0x00af, 0x02ff], // Latin-1 and Latin Extended, minus © ® and soft hyphen
  [0x0370, 0x0482],
  [0x048a, 0x052f], // Greek and Cyrillic, minus combining marks
  [0x05d0, 0x05ea], // Hebrew letters
  [0x0620, 0x064a],
  [0x0671, 0x06d3], // Arabic letters, minus marks and the Prepend signs
  [0x0e01, 0x0e30],
  [0x0e32, 0x0e32],
  [0x0e3f, 0x0e46],
  [0x0e4f, 0x0e5b], // Thai, minus marks and SARA AM
  [0x1e00, 0x1eff], // Latin Extended Additional
  [0x3041, 0x3096],
  [0x30a1, 0x30fa], // Hiragana, Katakana
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff], // CJK Unified Ideographs
  [0xac00, 0xd7a3], // Hangul syllables (LV, LVT): they join only jamo, which are not listed (GB6-GB8)
  [0xff01, 0xff9d], // Fullwidth forms, minus the halfwidth voiced marks
];

const SIMPLE = new Uint8Array(0x10000);
for (const [first, last] of SIMPLE_RANGES) SIMPLE.fill(1, first, last + 1);

// Grapheme_Cluster_Break=Extend is Grapheme_Extend plus Emoji_Modifier (UAX #29, table 2); ZWJ is its own class.
const EXTEND = /^[\p{Grapheme_Extend}\p{Emoji_Modifier}]$/u;
const EXTENDED_PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;
// Lookup tables for the BMP and the Supplementary Multilingual Plane (where the emoji are);
// the rarer planes above fall back to the regular expressions.
const TABLED_PLANES_END = 0x20000;
const EXTEND_TABLE = new Uint8Array(TABLED_PLANES_END);
const PICTOGRAPHIC_TABLE = new Uint8Array(TABLED_PLANES_END);
for (let point = 0; point < TABLED_PLANES_END; point++) {
  if (point >= 0xd800 && point <= 0xdfff) continue;
  const char = String.fromCodePoint(point);
  if (EXTEND.test(char)) EXTEND_TABLE[point] = 1;
  if (EXTENDED_PICTOGRAPHIC.test(char)) PICTOGRAPHIC_TABLE[point] = 1;
}

/** The length (1 or 2) of the code point at `at` when it has the property, else 0. */
function lengthIf(table: Uint8Array, pattern: RegExp, text: string, at: number): number {
  const point = text.codePointAt(at) as number;
  const length = point < 0x10000 ? 1 : 2;
  if (point < TABLED_PLANES_END) return table[point] === 1 ? length : 0;
  return pattern.test(text.slice(at, at + 2)) ? length : 0;
}

const isExtendAt = (text: string, at: number): number => lengthIf(EXTEND_TABLE, EXTEND, text, at);
const pictographAt = (text: string, at: number): number => lengthIf(PICTOGRAPHIC_TABLE, EXTENDED_PICTOGRAPHIC, text, at);

/**
 * The end of the cluster at `start` when it is a SIMPLE character or a pictograph followed only
 * by Extend characters (GB9) and then a certain boundary, or -1. Such a cluster joins nothing
 * else: a SIMPLE character, a control or a pictograph after it starts a new cluster (GB5, GB999;
 * GB11 would need a ZWJ before the pictograph, GB9c a consonant, GB9a a SpacingMark, and none of
 * those is SIMPLE, Extend or a pictograph).
 */
function baseWithExtends(text: string, start: number): number {
  const unit = text.charCodeAt(start);
  let at = SIMPLE[unit] === 1 ? start + 1 : start + pictographAt(text, start);
  if (at === start) return -1;
  for (let length = isExtendAt(text, at); at < text.length && length > 0; length = isExtendAt(text, at)) at += length;
  if (at === text.length) return at;
  const next = text.charCodeAt(at);
  return SIMPLE[next] === 1 || isControl(next) || pictographAt(text, at) > 0 ? at : -1;
}

// C0 controls and DEL are GCB Control: a boundary is always after them (GB4) and before them (GB5).
const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;
const isControl = (unit: number): boolean => unit < 0x20 || unit === 0x7f;

/**
 * Splits `text` into extended grapheme clusters (Unicode UAX #29), exactly as
 * `Intl.Segmenter` with grapheme granularity does, in time linear in the length of `text`.
 *
 * Node's segmenter takes time quadratic in the length of its input, so it only ever sees windows of
 * about `window` characters. Each window starts at a grapheme boundary; every boundary it reports
 * before its last segment is final, because UAX #29 decides a boundary from the text before it
 * and the one (whole) character after it, and text before a boundary never reaches past it (GB11, GB12/13
 * and GB9c sequences lie within a single cluster). The last segment may be cut by the window's end,
 * so the next window starts there. Where a boundary is certain (next to a control, or between two
 * `SIMPLE_RANGES` characters) a window ends early and keeps all its clusters, and a character
 * with certain boundaries on both sides skips the segmenter: plain text of most scripts is fast.
 *
 * With `maxClusters`, it stops once it has found more than that many (the result then has at
 * least `maxClusters + 1` and is not the whole split), so that a caller bounding the number of
 * parts does not pay for all of them.
 *
 * @example
 * splitGraphemes('👍🏽e\u0301!') //=> ['👍🏽', 'é', '!']
 */
export function splitGraphemes(text: string, window: number = DEFAULT_WINDOW, maxClusters = Infinity): string[] {
  const clusters: string[] = [];
  const end = text.length;
  let start = 0;
  while (start < end && clusters.length <= maxClusters) {
    if (text.charCodeAt(start) === CR && text.charCodeAt(start + 1) === LF) {
      clusters.push('\r\n'); // GB3, then GB4: a boundary after LF
      start += 2;
      continue;
    }
    if (start + 1 === end || isCertainBoundary(text, start + 1)) {
      clusters.push(text[start] as string);
      start++;
      continue;
    }
    const clusterEnd = baseWithExtends(text, start);
    if (clusterEnd > 0) {
      clusters.push(text.slice(start, clusterEnd));
      start = clusterEnd;
      continue;
    }
    // Text with uncertain boundaries: one segmenter call for up to `window` characters (each call
    // has a fixed cost), cut at a certain boundary: where a long stretch of plain text begins, or
    // the last one in the window.
    const limit = Math.min(end, start + window);
    let cut = start;
    let plainFrom = -1;
    let at = start + 2;
    for (; at < limit; at++) {
      if (!isCertainBoundary(text, at)) {
        plainFrom = -1;
        continue;
      }
      cut = at;
      if (plainFrom < 0) plainFrom = at;
      else if (at - plainFrom >= PLAIN_STRETCH) break;
    }
    if (at < limit) cut = plainFrom;
    else if (limit === end) cut = end;
    if (cut > start) {
      for (const { segment } of segmenter.segment(text.slice(start, cut))) clusters.push(segment);
      start = cut;
    } else {
      start = segmentWindow(text, start, window, clusters);
    }
  }
  return clusters;
}

/** True when UAX #29 puts a boundary before `text[at]` whatever comes before or after. */
function isCertainBoundary(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  if (before === CR && after === LF) return false; // GB3
  // GB4 and GB5: always a boundary after and before a control; GB999 between two SIMPLE characters.
  return isControl(before) || isControl(after) || (SIMPLE[before] === 1 && SIMPLE[after] === 1);
}

/** Appends the final clusters of one window starting at `start`; returns where the next begins. */
function segmentWindow(text: string, start: number, window: number, clusters: string[]): number {
  for (let size = window; ; size *= 2) {
    let stop = Math.min(text.length, start + size);
    // The character after the last kept boundary must be whole, so never end inside a surrogate pair.
    if (stop < text.length && isHighSurrogate(text.charCodeAt(stop - 1)) && isLowSurrogate(text.charCodeAt(stop))) stop++;
    const segments = Array.from(segmenter.segment(text.slice(start, stop)), (s) => s.segment);
    const atEnd = stop === text.length;
    // A window holding one unfinished cluster proves nothing: widen it.
    if (!atEnd && segments.length < 2) continue;
    const kept = atEnd ? segments.length : segments.length - 1;
    let next = start;
    for (let i = 0; i < kept; i++) {
      const segment = segments[i] as string;
      clusters.push(segment);
      next += segment.length;
    }
    return next;
  }
}
