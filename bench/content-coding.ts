/**
 * What content codings cost and save (issue 40): S3 and S4 (bench/scenarios.ts) with and without
 * `Accept-Encoding`, and with a gzip-coded body, on the built service, by wrk. Each of `--processes`
 * service processes (pinned to CPU 0, wrk on CPU 1) gets the bench's mixed warm-up, then each
 * variant in turn, alternating, for `--seconds`; per variant: CPU time per request (the service's
 * process, all its threads: zlib codes on libuv's pool), bytes on the wire per answer (wrk's bytes
 * read, headers included) and per request body, and req/s. Medians over the processes.
 *
 *   npm run build && npx tsx bench/content-coding.ts [--processes 3] [--seconds 5] [--out bench/results/content-coding/throughput.json]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { generateLoad, installed } from './load.js';
import { scenarios, type Scenario } from './scenarios.js';
import { cpuMicroseconds, startTarget } from './targets.js';

const { values: flags } = parseArgs({
  options: {
    processes: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
});
const canPin = installed('taskset') && cpus().length >= 2;
const serverPin = canPin ? ['taskset', '-c', '0'] : [];
const loadPin = canPin ? ['taskset', '-c', '1'] : [];
if (canPin) execFileSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' });
const workDir = mkdtempSync(join(tmpdir(), 'bench-coding-'));

interface Variant {
  readonly name: string;
  readonly scenario: Scenario;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}
const chosen = scenarios().filter((scenario) => scenario.id === 'S3' || scenario.id === 'S4');
const variants: Variant[] = chosen.flatMap((scenario): Variant[] => {
  const plain = Buffer.from(scenario.body as string);
  return [
    { name: `${scenario.id} plain`, scenario, headers: {}, body: plain },
    { name: `${scenario.id} accept gzip`, scenario, headers: { 'accept-encoding': 'gzip' }, body: plain },
    { name: `${scenario.id} accept br`, scenario, headers: { 'accept-encoding': 'br' }, body: plain },
    { name: `${scenario.id} accept zstd`, scenario, headers: { 'accept-encoding': 'zstd' }, body: plain },
    { name: `${scenario.id} gzip body, accept gzip`, scenario, headers: { 'content-encoding': 'gzip', 'accept-encoding': 'gzip' }, body: gzipSync(plain) },
  ];
});

interface Row {
  variant: string;
  process: number;
  requestsPerSecond: number;
  cpuMicrosecondsPerRequest: number;
  answerBytes: number;
  bodyBytes: number;
  errors: number;
}
const rows: Row[] = [];
for (let round = 0; round < Number(flags.processes); round++) {
  const service = await startTarget('service', serverPin, workDir);
  try {
    // The mixed warm-up of bench/run.ts, shortened: every scenario a few hundred times.
    for (const scenario of scenarios()) {
      for (let i = 0; i < 50; i++) {
        const answer = await fetch(service.base + scenario.path, {
          method: scenario.method,
          ...(scenario.body === undefined
            ? {}
            : { body: scenario.body, headers: { 'content-type': 'application/json', 'accept-encoding': i % 2 === 0 ? 'gzip' : 'identity' } }),
        });
        await answer.arrayBuffer();
      }
    }
    // Alternating: each variant once per round, the rounds' order rotated per process.
    const order = [...variants.slice(round % variants.length), ...variants.slice(0, round % variants.length)];
    for (const variant of order) {
      const bodyFile = join(workDir, `${variant.name.replaceAll(' ', '-')}.body`);
      writeFileSync(bodyFile, variant.body);
      const load = {
        url: service.base + variant.scenario.path,
        method: 'POST' as const,
        bodyFile,
        connections: variant.scenario.connections ?? 16,
        seconds: Number(flags.seconds),
        headers: variant.headers,
      };
      await generateLoad('wrk', { ...load, seconds: 1 }, loadPin, workDir);
      const before = cpuMicroseconds(service.pid);
      const result = await generateLoad('wrk', load, loadPin, workDir);
      const cpu = cpuMicroseconds(service.pid) - before;
      rows.push({
        variant: variant.name,
        process: round,
        requestsPerSecond: Math.round(result.requestsPerSecond),
        cpuMicrosecondsPerRequest: Math.round((cpu / result.requests) * 10) / 10,
        answerBytes: Math.round((result.bytesRead ?? NaN) / result.requests),
        bodyBytes: variant.body.length,
        errors: result.errors + result.non2xx,
      });
      process.stderr.write(`${JSON.stringify(rows.at(-1))}\n`);
    }
  } finally {
    await service.stop();
  }
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const summary = variants.map((variant) => {
  const mine = rows.filter((row) => row.variant === variant.name);
  const range = (key: 'requestsPerSecond' | 'cpuMicrosecondsPerRequest') =>
    `${median(mine.map((row) => row[key]))} (${Math.min(...mine.map((row) => row[key]))}-${Math.max(...mine.map((row) => row[key]))})`;
  return {
    variant: variant.name,
    requestsPerSecond: range('requestsPerSecond'),
    cpuMicrosecondsPerRequest: range('cpuMicrosecondsPerRequest'),
    answerBytes: median(mine.map((row) => row.answerBytes)),
    bodyBytes: variant.body.length,
    errors: mine.reduce((sum, row) => sum + row.errors, 0),
  };
});
const report = { node: process.version, processes: Number(flags.processes), seconds: Number(flags.seconds), pinning: canPin, summary, rows };
const text = `${JSON.stringify(report, null, 2)}\n`;
if (flags.out !== undefined) writeFileSync(flags.out, text);
else process.stdout.write(text);
