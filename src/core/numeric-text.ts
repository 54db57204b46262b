/**
 * The exact reading of a string written in JavaScript's numeric string notation
 * (ECMA-262 StringNumericLiteral, minus `Infinity`, numeric separators and empty text).
 *
 * A decimal value is `sign × 0.digits × 10^pointAt`; nothing is rounded, so any magnitude works.
 */
export type NumericNotation =
  | { readonly kind: 'decimal'; readonly negative: boolean; readonly digits: string; readonly pointAt: number }
  | { readonly kind: 'radix'; readonly radix: 2 | 8 | 16; readonly digits: string };

/**
 * What `parseNumericText` reads, with the whitespace around it that callers trim, as one regular
 * expression (ECMAScript, as JSON Schema's `pattern`): a number field's string form in the OpenAPI
 * document. test/core/numeric-text.test.ts checks that the two agree.
 *
 * @example
 * new RegExp(NUMERIC_TEXT_PATTERN, 'u').test(' 0x1F ') //=> true
 */
export const NUMERIC_TEXT_PATTERN = '^\\s*(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[+-]?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\\s*$';

const RADIX_BY_LETTER: Readonly<Record<string, 2 | 8 | 16>> = { x: 16, X: 16, o: 8, O: 8, b: 2, B: 2 };
const RADIX_DIGIT = { 2: /^[01]+$/, 8: /^[0-7]+$/, 16: /^[0-9a-fA-F]+$/ } as const;

// Exponents beyond this are all "huge": no digit string can be long enough to reach them.
const EXPONENT_CLAMP = 1e15;

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

// A sticky regex skips a run of digits natively, where a charCodeAt loop would visit each digit
// of a number thousands of digits long.
const DIGIT_RUN = /\d*/y;

function skipDigits(text: string, from: number): number {
  DIGIT_RUN.lastIndex = from;
  DIGIT_RUN.test(text);
  return DIGIT_RUN.lastIndex;
}

/**
 * Reads `text` (already trimmed) as a numeric literal, or returns `undefined` when it is not one.
 * Linear in the length of `text`, with no backtracking.
 *
 * @example
 * parseNumericText('-1.5e3') //=> { kind: 'decimal', negative: true, digits: '15', pointAt: 4 }
 * parseNumericText('0x1F')   //=> { kind: 'radix', radix: 16, digits: '1F' }
 * parseNumericText('12px')   //=> undefined
 */
export function parseNumericText(text: string): NumericNotation | undefined {
  const radix = text.length > 2 && text[0] === '0' ? RADIX_BY_LETTER[text[1] as string] : undefined;
  if (radix !== undefined) {
    const digits = text.slice(2);
    return RADIX_DIGIT[radix].test(digits) ? { kind: 'radix', radix, digits } : undefined;
  }

  const end = text.length;
  let i = 0;
  const negative = text[0] === '-';
  if (negative || text[0] === '+') i++;

  const integerStart = i;
  i = skipDigits(text, i);
  const integerDigits = text.slice(integerStart, i);
  let fractionDigits = '';
  if (text[i] === '.') {
    const fractionStart = ++i;
    i = skipDigits(text, i);
    fractionDigits = text.slice(fractionStart, i);
  }
  if (integerDigits.length + fractionDigits.length === 0) return undefined;

  let exponent = 0;
  if (text[i] === 'e' || text[i] === 'E') {
    i++;
    const exponentNegative = text[i] === '-';
    if (exponentNegative || text[i] === '+') i++;
    const exponentStart = i;
    while (i < end && text.charCodeAt(i) === 48) i++;
    const significantStart = i;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
    if (i === exponentStart) return undefined;
    const significant = text.slice(significantStart, i);
    const magnitude = significant.length > 15 ? EXPONENT_CLAMP : Math.min(Number(significant || '0'), EXPONENT_CLAMP);
    exponent = exponentNegative ? -magnitude : magnitude;
  }
  if (i !== end) return undefined;

  return { kind: 'decimal', negative, digits: integerDigits + fractionDigits, pointAt: integerDigits.length + exponent };
}
