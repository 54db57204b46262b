import { isDeepStrictEqual } from 'node:util';

/** The scenarios: the same request to every target; `check` says whether an answer is right. */
export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: string;
  readonly connections?: number;
  readonly check: (answer: unknown) => boolean;
}

// A fixed-seed generator, so that every run and every target sorts the same numbers (mulberry32).
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const numericOrder = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);

function sortScenario(id: string, title: string, values: readonly number[], connections?: number): Scenario {
  const expected = numericOrder(values);
  return {
    id,
    title,
    method: 'POST',
    path: '/api/sort',
    body: JSON.stringify({ input: values }),
    ...(connections === undefined ? {} : { connections }),
    check: (answer) => isDeepStrictEqual(answer, { sortedArray: expected }),
  };
}

/** About `bytes` of UTF-8 JSON: records with nested objects, arrays, numbers and non-ASCII text, keys out of order. */
export function nestedDocument(bytes: number, random = seededRandom(5)): unknown {
  const records: unknown[] = [];
  const document = { version: 3, generated: '2026-11-22T00:00:00Z', records, meta: { zeta: null, alpha: [true, false] } };
  for (let i = 0, size = Buffer.byteLength(JSON.stringify(document)); size < bytes; i++) {
    const record = {
      name: `récord ${i} ✓`,
      id: i,
      score: Math.round(random() * 1e6) / 1e3,
      tags: ['b', 'a', `t${i % 7}`],
      owner: { team: { name: 'platform', size: 1 + (i % 9), lead: { email: `lead${i}@example.com`, active: i % 2 === 0 } } },
      ratio: random() < 0.5 ? 1e21 * random() : -random(),
    };
    records.push(record);
    size += Buffer.byteLength(JSON.stringify(record)) + 1;
  }
  return document;
}

export function randomIntegers(count: number, random = seededRandom(1)): number[] {
  return Array.from({ length: count }, () => Math.floor(random() * 2_000_001) - 1_000_000);
}

function randomDoubles(count: number, random = seededRandom(2)): number[] {
  return Array.from({ length: count }, () => (random() - 0.5) * 1e6);
}

function digits(count: number, random = seededRandom(3)): string {
  let text = String(1 + Math.floor(random() * 9));
  while (text.length < count) text += String(Math.floor(random() * 10));
  return text;
}

export function scenarios(): Scenario[] {
  const document = nestedDocument(10 * 1024);
  const longInteger = digits(10_000);
  return [
    {
      id: 'S1',
      title: 'POST /api/isEven {"input":12345}',
      method: 'POST',
      path: '/api/isEven',
      body: '{"input":12345}',
      check: (a) => isDeepStrictEqual(a, { ret: false }),
    },
    { id: 'S2', title: 'GET /api/isOdd/12345', method: 'GET', path: '/api/isOdd/12345', check: (a) => isDeepStrictEqual(a, { ret: true }) },
    sortScenario('S3', 'POST /api/sort, 1,000 random integers', randomIntegers(1_000)),
    sortScenario('S4', 'POST /api/sort, 100,000 random doubles, 4 connections', randomDoubles(100_000), 4),
    {
      id: 'S5',
      title: 'POST /api/toString, 10 KB nested object',
      method: 'POST',
      path: '/api/toString',
      body: JSON.stringify({ input: document }),
      // The service answers RFC 8785 text, the others JSON.stringify's: both must parse back to the input.
      check: (a) => typeof (a as { ret?: unknown }).ret === 'string' && isDeepStrictEqual(JSON.parse((a as { ret: string }).ret), document),
    },
    {
      id: 'S6',
      title: 'GET /api/isEven/<10,000-digit integer>',
      method: 'GET',
      path: `/api/isEven/${longInteger}`,
      check: (a) => isDeepStrictEqual(a, { ret: Number(longInteger.at(-1)) % 2 === 0 }),
    },
  ];
}
