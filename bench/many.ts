import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { generateLoad, type LoadGenerator } from './load.js';
import { memoryMiB, type RunningTarget } from './targets.js';
import { randomIntegers, seededRandom } from './scenarios.js';

/**
 * Issue 27's measurements, on the service alone (no other target batches or streams), in the same
 * run and rounds as S1: isEven in batches of 1,000, a batch of mixed operations, and a stream of
 * 1,000,000 isEven lines, each in operations per second and as a ratio to S1's, with the
 * stream's peak RSS over idle. Every answer of each is checked once before it is measured.
 */

export interface ManyRow {
  readonly id: string;
  readonly title: string;
  readonly round: number;
  readonly operationsPerSecond: number;
  /** S1's operations (requests) per second in the same round. */
  readonly s1OperationsPerSecond: number;
  /** The stream's: RSS before it and the most seen while it ran. */
  readonly idleMiB?: number;
  readonly peakMiB?: number;
}

export interface ManySettings {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly streamLines: number;
  readonly generator: LoadGenerator;
  readonly loadPin: readonly string[];
  readonly workDir: string;
  readonly requestsPerConnection?: number;
}

const S1_BODY = '{"input":12345}';
const isEvenBatch = randomIntegers(1000).map((input) => ({ operation: 'isEven', input }));
const MIXED = [
  ...randomIntegers(100).map((input) => ({ operation: 'isOdd', input: String(input) })),
  ...randomIntegers(50).map((input) => ({ operation: 'isNumber', input: ` ${input} ` })),
  ...Array.from({ length: 20 }, (_, i) => ({ operation: 'sort', input: randomIntegers(50, seededRandom(10 + i)) })),
  ...Array.from({ length: 20 }, (_, i) => ({ operation: 'toString', input: { b: [i, true], a: `é${i}` } })),
  ...Array.from({ length: 10 }, (_, i) => ({ operation: 'stringSplit', input: { string: `a,b,${i}`, seperator: ',' } })),
];

function expectedAnswer(item: { operation: string; input: unknown }): unknown {
  const { operation, input } = item;
  switch (operation) {
    case 'isEven':
      return { ret: Number(input) % 2 === 0 };
    case 'isOdd':
      return { ret: Math.abs(Number(input) % 2) === 1 };
    case 'isNumber':
      return { ret: true };
    case 'sort':
      return { sortedArray: [...(input as number[])].sort((a, b) => a - b) };
    case 'toString': {
      const value = input as { b: unknown; a: unknown };
      return { ret: JSON.stringify({ a: value.a, b: value.b }) };
    }
    default:
      return { ret: String((input as { string: string }).string).split(',') };
  }
}

const BATCHES = [
  { id: 'B1', title: 'POST /api/batch, 1,000 isEven', operations: isEvenBatch },
  { id: 'B3', title: `POST /api/batch, ${MIXED.length} mixed operations (isOdd, isNumber, sort of 50, toString, stringSplit)`, operations: MIXED },
];

async function postJson(base: string, path: string, body: string): Promise<{ status: number; answer: unknown }> {
  const response = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, answer: await response.json() };
}

/** Streams `lines` isEven lines in one request, checking every answer; its time and the service's RSS while it ran. */
async function streamOnce(target: RunningTarget, lines: number): Promise<{ seconds: number; idleMiB: number; peakMiB: number }> {
  const inputs = randomIntegers(1000);
  const chunkLines = 2000;
  const idleMiB = memoryMiB(target.pid, 'VmRSS');
  let peakMiB = idleMiB;
  const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, memoryMiB(target.pid, 'VmRSS'))), 20);
  const started = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      const url = new URL('/api/stream', target.base);
      const sent = request(url, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } });
      sent.on('error', reject);
      sent.on('response', (response) => {
        if (response.statusCode !== 200) return reject(new Error(`the stream answered ${response.statusCode}`));
        let seen = 0;
        let rest = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const parts = (rest + chunk).split('\n');
          rest = parts.pop() ?? '';
          for (const line of parts) {
            const even = (inputs[seen % inputs.length] as number) % 2 === 0;
            if (line !== `{"status":200,"result":{"ret":${even}}}`) return reject(new Error(`stream line ${seen} answered ${line.slice(0, 200)}`));
            seen++;
          }
        });
        response.on('end', () => (seen === lines ? resolve() : reject(new Error(`the stream answered ${seen} of ${lines} lines`))));
      });
      void (async () => {
        for (let from = 0; from < lines; from += chunkLines) {
          let text = '';
          for (let i = from; i < Math.min(lines, from + chunkLines); i++) text += `{"operation":"isEven","input":${inputs[i % inputs.length]}}\n`;
          if (!sent.write(text)) await new Promise((drained) => sent.once('drain', drained));
        }
        sent.end();
      })();
    });
  } finally {
    clearInterval(sampler);
  }
  return { seconds: (performance.now() - started) / 1000, idleMiB, peakMiB: Math.max(peakMiB, memoryMiB(target.pid, 'VmRSS')) };
}

export async function manyOperations(target: RunningTarget, settings: ManySettings, log: (line: string) => void): Promise<ManyRow[]> {
  for (const batch of BATCHES) {
    const { status, answer } = await postJson(target.base, '/api/batch', JSON.stringify({ operations: batch.operations }));
    const expected = { answers: batch.operations.map((item) => ({ status: 200, result: expectedAnswer(item) })) };
    if (status !== 200 || !isDeepStrictEqual(answer, expected))
      throw new Error(`service answers ${batch.id} wrongly: ${status} ${JSON.stringify(answer).slice(0, 300)}`);
    writeFileSync(join(settings.workDir, `${batch.id}.json`), JSON.stringify({ operations: batch.operations }));
  }
  writeFileSync(join(settings.workDir, 'S1-many.json'), S1_BODY);
  const rows: ManyRow[] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const load = async (path: string, file: string): Promise<number> => {
      const connections = settings.connections;
      const result = await generateLoad(
        settings.generator,
        {
          url: target.base + path,
          method: 'POST',
          bodyFile: join(settings.workDir, file),
          connections,
          seconds: settings.seconds,
          ...(settings.requestsPerConnection === undefined ? {} : { requests: settings.requestsPerConnection * connections }),
        },
        settings.loadPin,
        settings.workDir,
      );
      return result.requestsPerSecond;
    };
    const s1 = await load('/api/isEven', 'S1-many.json');
    log(`many round ${round} S1 ${Math.round(s1)} ops/s`);
    for (const batch of BATCHES) {
      const operationsPerSecond = (await load('/api/batch', `${batch.id}.json`)) * batch.operations.length;
      rows.push({ id: batch.id, title: batch.title, round, operationsPerSecond, s1OperationsPerSecond: s1 });
      log(`many round ${round} ${batch.id} ${Math.round(operationsPerSecond)} ops/s, ${(operationsPerSecond / s1).toFixed(1)} × S1`);
    }
    const stream = await streamOnce(target, settings.streamLines);
    const operationsPerSecond = settings.streamLines / stream.seconds;
    rows.push({
      id: 'B2',
      title: `POST /api/stream, ${settings.streamLines.toLocaleString('en')} isEven lines`,
      round,
      operationsPerSecond,
      s1OperationsPerSecond: s1,
      idleMiB: stream.idleMiB,
      peakMiB: stream.peakMiB,
    });
    log(
      `many round ${round} B2 ${Math.round(operationsPerSecond)} ops/s, ${(operationsPerSecond / s1).toFixed(1)} × S1, RSS ${stream.idleMiB} → ${stream.peakMiB} MiB`,
    );
  }
  return rows;
}

/** The section of the report: per measurement, the median over rounds and the spread. */
export function manySection(rows: readonly ManyRow[]): string[] {
  if (rows.length === 0) return [];
  const lines = [
    '',
    '## Many operations per request (issue 27)',
    '',
    'The service alone, in the same rounds as S1 (`POST /api/isEven`, one operation a request). Goal: at least 25 × S1 for the batch and the stream, and the stream within 64 MiB of idle RSS.',
    '',
    '| | Operations/s (median) | × S1, median (rounds) | Stream RSS: idle → peak |',
    '| --- | --- | --- | --- |',
  ];
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  for (const id of ['B1', 'B2', 'B3']) {
    const of = rows.filter((row) => row.id === id);
    if (of.length === 0) continue;
    const ratios = of.map((row) => row.operationsPerSecond / row.s1OperationsPerSecond);
    const rss = of.filter((row) => row.peakMiB !== undefined).map((row) => `${row.idleMiB} → ${row.peakMiB} MiB`);
    lines.push(
      `| ${id}: ${of[0]?.title} | ${Math.round(median(of.map((row) => row.operationsPerSecond))).toLocaleString('en')} | ${median([...ratios]).toFixed(1)} (${ratios.map((r) => r.toFixed(1)).join(', ')}) | ${rss.join('; ') || '-'} |`,
    );
  }
  return lines;
}
