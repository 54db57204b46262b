// Moves the surrogates (U+D800–U+DFFF) above U+E000–U+FFFF so that comparing UTF-16 code units
// gives code point order: every astral code point sorts after every BMP one.
const codePointRank = (unit: number): number => (unit >= 0xd800 ? (unit >= 0xe000 ? unit - 0x800 : unit + 0x2000) : unit);

/**
 * Compares two strings by Unicode code point, the locale-independent order; unlike `<`, which
 * compares UTF-16 code units, it puts `'\uFF01'` before `'😀'`.
 *
 * @example
 * ['😀', '\uFF01'].sort(compareCodePoints) //=> ['\uFF01', '😀']
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const HIGH_UNITS = /[\ud800-\uffff]/;

/** True when UTF-16 code unit order and code point order agree on these strings. */
export function codeUnitOrderIsCodePointOrder(strings: readonly string[]): boolean {
  for (const s of strings) if (HIGH_UNITS.test(s)) return false;
  return true;
}
