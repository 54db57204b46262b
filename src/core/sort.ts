import { canonicalJson, canonicalTextAt } from './canonical-json.js';
import { codeUnitOrderIsCodePointOrder, compareCodePoints } from './code-point-order.js';
import { CORE_ERRORS, InputError } from './errors.js';
import type { JsonValue } from './json.js';

export type SortOrder = 'asc' | 'desc';

export interface SortOptions {
  /** `'asc'` (default) or `'desc'`: the reverse order, still stable. */
  readonly order?: SortOrder;
  /** A BCP 47 tag: strings follow that locale's collation instead of code point order. */
  readonly locale?: string;
}

type Compare<T> = (a: T, b: T) => number;

const COLLATOR_CACHE_SIZE = 64;
const collators = new Map<string, Intl.Collator>();

/**
 * The collator for a BCP 47 tag, or an `InputError` when the tag is not well formed.
 *
 * @example
 * collatorFor('sv').compare('ä', 'z') //=> 1
 */
export function collatorFor(locale: string): Intl.Collator {
  let collator = collators.get(locale);
  if (collator === undefined) {
    try {
      collator = new Intl.Collator(Intl.getCanonicalLocales(locale));
    } catch {
      throw new InputError('must be a well-formed BCP 47 language tag, such as "en", "de-DE" or "sv"');
    }
    if (collators.size >= COLLATOR_CACHE_SIZE) collators.delete(collators.keys().next().value as string);
    collators.set(locale, collator);
  }
  return collator;
}

// docs/behaviour.md §2.5, mixed types: null < false < true < numbers < strings < arrays < objects.
const enum Rank {
  Null,
  False,
  True,
  Number,
  String,
  Array,
  Object,
}

function rankOf(value: JsonValue): Rank {
  switch (typeof value) {
    case 'number':
      return Rank.Number;
    case 'string':
      return Rank.String;
    case 'boolean':
      return value ? Rank.True : Rank.False;
    default:
      return value === null ? Rank.Null : Array.isArray(value) ? Rank.Array : Rank.Object;
  }
}

/**
 * Sorts JSON values into a new array, stable, without touching the input. Numbers go in numeric
 * order, strings in code point order (or a locale's collation), and mixed types in one total
 * order: `null < false < true < numbers < strings < arrays < objects`; arrays compare element by
 * element, objects by their RFC 8785 canonical text. Throws `InputError` for a number beyond the
 * range of a double or a value that is not JSON.
 *
 * @example
 * sort([10, 9, 1.5])                        //=> [1.5, 9, 10]
 * sort(['b', 'a', 'B'])                     //=> ['B', 'a', 'b']
 * sort(['b', 'a', 'B'], { locale: 'en' })   //=> ['a', 'b', 'B']
 * sort([[2], 'x', 1, null, { a: 1 }, true]) //=> [null, true, 1, 'x', [2], { a: 1 }]
 * sort([1, 3, 2], { order: 'desc' })        //=> [3, 2, 1]
 */
export function sort(values: readonly JsonValue[], options: SortOptions = {}): JsonValue[] {
  if (!Array.isArray(values)) throw new InputError('must be an array');
  const { order = 'asc', locale } = options;
  if (order !== 'asc' && order !== 'desc') throw new InputError('order must be "asc" or "desc"');
  const collator = locale === undefined ? undefined : collatorFor(locale);

  let numbers = 0;
  let strings = 0;
  for (let i = 0; i < values.length; i++) {
    // unknown: Array.isArray above narrows a readonly array to any[].
    const value: unknown = values[i];
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new InputError(CORE_ERRORS.beyondDouble, [i]);
      numbers++;
    } else if (typeof value === 'string') {
      strings++;
    }
  }

  if (numbers === values.length) return sortNumbers(values as readonly number[], order);
  if (strings === values.length) return sortStrings(values as readonly string[], order, collator);
  return sortMixed(values, order, valueComparator(collator));
}

/**
 * Sorts positions rather than values, with each element's rank and, for an object, its canonical
 * text worked out once up front instead of at every comparison.
 */
function sortMixed(values: readonly JsonValue[], order: SortOrder, compare: Compare<JsonValue>): JsonValue[] {
  const ranks = values.map(rankOf);
  // Writing an array's or object's text checks that all of it is JSON; only objects compare by it.
  const texts = values.map((value, i) => {
    const rank = ranks[i];
    if (rank !== Rank.Array && rank !== Rank.Object) return '';
    const text = canonicalTextAt(value, [i], 'escape');
    return rank === Rank.Object ? text : '';
  });
  const compareAt = (i: number, j: number): number => {
    const rank = ranks[i] as Rank;
    const difference = rank - (ranks[j] as Rank);
    if (difference !== 0) return difference;
    return rank === Rank.Object ? compareCodePoints(texts[i] as string, texts[j] as string) : compare(values[i] as JsonValue, values[j] as JsonValue);
  };
  const positions = values.map((_, i) => i);
  positions.sort(order === 'asc' ? compareAt : (i, j) => compareAt(j, i));
  return positions.map((i) => values[i] as JsonValue);
}

function sortNumbers(values: readonly number[], order: SortOrder): number[] {
  const sorted = new Float64Array(values.length);
  // -0 and 0 are equal (docs/behaviour.md §2.5); storing +0 keeps the typed sort, which puts -0 first, stable.
  for (let i = 0; i < values.length; i++) sorted[i] = (values[i] as number) || 0;
  sorted.sort();
  if (order === 'desc') sorted.reverse();
  // push, not Array.from (which walks an iterator) nor new Array(n) (a holey array, which
  // JSON.stringify writes more slowly).
  const result: number[] = [];
  for (let i = 0; i < sorted.length; i++) result.push(sorted[i] as number);
  return result;
}

function sortStrings(values: readonly string[], order: SortOrder, collator: Intl.Collator | undefined): string[] {
  if (collator !== undefined) {
    // A collator can call distinct strings equal, so "desc" needs its own stable pass.
    const compare = collator.compare;
    return values.slice().sort(order === 'asc' ? compare : (a, b) => compare(b, a));
  }
  // Strings equal in code point order are identical, so reversing keeps "desc" stable.
  const sorted = codeUnitOrderIsCodePointOrder(values) ? values.slice().sort() : values.slice().sort(compareCodePoints);
  return order === 'asc' ? sorted : sorted.reverse();
}

function valueComparator(collator: Intl.Collator | undefined): Compare<JsonValue> {
  // A collator's compare is bound to it (ECMA-402 §10.3.3), so it can be called on its own.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const compareStrings: Compare<string> = collator?.compare ?? compareCodePoints;
  const canonicalTexts = new WeakMap<object, string>();
  const canonicalText = (value: object): string => {
    let text = canonicalTexts.get(value);
    if (text === undefined) canonicalTexts.set(value, (text = canonicalJson(value, 'escape')));
    return text;
  };

  const compare: Compare<JsonValue> = (a, b) => {
    const rank = rankOf(a);
    const difference = rank - rankOf(b);
    if (difference !== 0) return difference;
    switch (rank) {
      case Rank.Number:
        return (a as number) - (b as number);
      case Rank.String:
        return compareStrings(a as string, b as string);
      case Rank.Array: {
        const left = a as JsonValue[];
        const right = b as JsonValue[];
        const length = Math.min(left.length, right.length);
        for (let i = 0; i < length; i++) {
          const elementOrder = compare(left[i] as JsonValue, right[i] as JsonValue);
          if (elementOrder !== 0) return elementOrder;
        }
        return left.length - right.length;
      }
      case Rank.Object:
        return compareCodePoints(canonicalText(a as object), canonicalText(b as object));
      default:
        return 0;
    }
  };
  return compare;
}
