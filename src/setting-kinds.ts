/**
 * The kinds of value a setting takes (config.ts): each says in words what it accepts, for
 * start-up errors and the docs, and parses the variable's text or gives undefined.
 */

/** How a variable is read: what it accepts, in words (for start-up errors and the docs), and its parser. */
export interface Kind<T> {
  readonly accepts: string;
  readonly parse: (raw: string) => T | undefined;
}

export interface Setting<T> extends Kind<T> {
  readonly env: string;
  readonly default: T;
  readonly meaning: string;
}

/** A kind from its words and parser. @example kind('`on` or `off`', (raw) => (raw === 'on' ? true : raw === 'off' ? false : undefined)) */
export const kind = <T>(accepts: string, parse: (raw: string) => T | undefined): Kind<T> => ({ accepts, parse });

// The longest setTimeout takes; the default upper bound of a whole number.
export const MOST = 2 ** 31 - 1;

/** A whole number in bounds. @example integer(1, 10).parse('7') //=> 7; .parse('1.5') //=> undefined */
export const integer = (min: number, max = MOST, unit = 'an integer'): Kind<number> =>
  kind(`${unit} from ${min}${max === MOST ? '' : ` to ${max}`}`, (raw) => {
    if (!/^\d+$/.test(raw)) return undefined;
    const value = Number(raw);
    return value >= min && value <= max ? value : undefined;
  });

/** A whole number of milliseconds. @example milliseconds(0).parse('250') //=> 250 */
export const milliseconds = (min: number, max = MOST) => integer(min, max, 'milliseconds, an integer');

/** What `other` accepts, or `word`. @example or('off', integer(1)).parse('off') //=> 'off' */
export const or = <W extends string, T>(word: W, other: Kind<T>, note = ''): Kind<W | T> =>
  kind(`${other.accepts}${note}, or \`${word}\``, (raw) => (raw === word ? word : other.parse(raw)));

/** One of these words. @example oneOf('json', 'pretty').parse('pretty') //=> 'pretty' */
export const oneOf = <T extends string>(...choices: readonly T[]): Kind<T> =>
  kind(
    `${choices
      .slice(0, -1)
      .map((c) => `\`${c}\``)
      .join(', ')} or \`${choices.at(-1)}\``,
    (raw) => ((choices as readonly string[]).includes(raw) ? (raw as T) : undefined),
  );

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))?$/;
/** A calendar date, or date and time with a zone. @example instant.parse('2027-02-30') //=> undefined */
export const instant = kind('an ISO 8601 date, or date and time with a zone', (raw): Date | undefined => {
  if (!ISO_DATE.test(raw)) return undefined;
  const [year, month, day] = raw.slice(0, 10).split('-').map(Number) as [number, number, number];
  // Date.parse rolls 2027-02-30 over to March: check the calendar date itself.
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day || month < 1 || month > 12) return undefined;
  const time = Date.parse(raw.length === 10 ? `${raw}T00:00:00Z` : raw);
  return Number.isNaN(time) ? undefined : new Date(time);
});

/** A setting's definition, typed by its parser. @example setting({ env: 'PORT', default: 3000, meaning: '...', ...integer(0, 65535) }) */
export const setting = <T>(definition: Setting<T>): Setting<T> => definition;

export const KIB = 1024;
export const MIB = 1024 * KIB;
export const GIB = 1024 * MIB;
const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, B: 1, KIB: KIB, MIB: MIB, GIB: GIB };

// The units a size is said in, largest first.
const UNITS = [
  ['GiB', GIB],
  ['MiB', MIB],
  ['KiB', KIB],
] as const;

/** A bound as said in an error: in the largest unit that holds it whole, else in bytes. */
const exactBytes = (bytes: number): string => {
  for (const [unit, factor] of UNITS) if (bytes >= factor && bytes % factor === 0) return `${bytes / factor} ${unit}`;
  return String(bytes);
};

/** Bytes, or a whole or decimal number with a KiB, MiB or GiB suffix. @example size(1).parse('1.5 GiB') //=> 1610612736 */
export const size = (min: number, max?: number) =>
  kind(`a number of bytes from ${exactBytes(min)}${max === undefined ? '' : ` to ${exactBytes(max)}`}, or with a \`KiB\`/\`MiB\`/\`GiB\` suffix`, (raw) => {
    const match = /^(\d+(?:\.\d+)?)\s*([KMG]iB|B)?$/i.exec(raw);
    const unit = match === null ? undefined : SIZE_UNITS[(match[2] ?? '').toUpperCase()];
    if (match === null || unit === undefined) return undefined;
    // A part of a byte (`1.5`, `0.3KiB`) is refused, not rounded.
    const value = Number(match[1]) * unit;
    return Number.isInteger(value) && value >= min && value <= (max ?? 2 ** 50) ? value : undefined;
  });

/** `n` bytes in the largest unit it reaches, whole or to one decimal (`805306368` → `768 MiB`). */
export function formatBytes(bytes: number): string {
  for (const [unit, factor] of UNITS) {
    if (bytes >= factor) return `${Number((bytes / factor).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}
