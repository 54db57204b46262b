import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { parseWrk, parseWrk2 } from '../bench/load.js';
import { leastOf, markdownReport, verdicts } from '../bench/report.js';
import type { BenchReport, Cell } from '../bench/report.js';
import { defineVariant, targetOf } from '../bench/targets.js';

const root = new URL('..', import.meta.url).pathname;

// wrk 4.1's report, as the bench reads it when wrk is installed.
const WRK_OUTPUT = `Running 10s test @ http://127.0.0.1:41234/api/isOdd/12345
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.98ms  512.11us  14.06ms   91.02%
    Req/Sec    16.83k     1.02k   18.10k    80.00%
  Latency Distribution
     50%    2.88ms
     75%    3.05ms
     90%    3.32ms
     99%  850.00us
  167512 requests in 10.01s, 30.67MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:  16734.52
Transfer/sec:      3.06MB
`;

test('wrk output is read into requests, req/s, p50 and p99 in ms, errors, non-2xx and bytes read', () => {
  assert.deepEqual(parseWrk(WRK_OUTPUT), {
    requests: 167512,
    requestsPerSecond: 16734.52,
    p50Ms: 2.88,
    p99Ms: 0.85,
    errors: 3,
    non2xx: 4,
    // wrk's MB are 2^20 bytes.
    bytesRead: 30.67 * 1024 * 1024,
  });
  assert.throws(() => parseWrk('unable to connect to 127.0.0.1:1 Connection refused'), /unexpected wrk output/);
});

// wrk2 44a94c1's report at a fixed rate (-R, --latency), cut before its detailed spectrum, as the steady part reads it.
const WRK2_OUTPUT = `Running 25s test @ http://127.0.0.1:40123/api/isEven
  1 threads and 50 connections
  Thread calibration: mean lat.: 1.689ms, rate sampling interval: 10ms
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.86ms    1.02ms  31.02ms   83.11%
    Req/Sec     7.91k     1.12k   12.11k    71.22%
  Latency Distribution (HdrHistogram - Recorded Latency)
 50.000%    1.70ms
 75.000%    2.26ms
 90.000%    2.95ms
 99.000%    5.12ms
 99.900%   14.21ms
 99.990%   29.01ms
 99.999%   31.02ms
100.000%   31.02ms

  Detailed Percentile spectrum:
       Value   Percentile   TotalCount 1/(1-Percentile)

       0.109     0.000000            1         1.00
  187470 requests in 25.00s, 76.70MB read
Requests/sec:   7498.65
Transfer/sec:      3.07MB
`;

test('wrk2 output is read into the rate, requests, req/s and the percentiles from the intended send times, in ms', () => {
  assert.deepEqual(parseWrk2(WRK2_OUTPUT, 7500), {
    rate: 7500,
    requestsPerSecond: 7498.65,
    requests: 187470,
    p50Ms: 1.7,
    p90Ms: 2.95,
    p99Ms: 5.12,
    p999Ms: 14.21,
    maxMs: 31.02,
    errors: 0,
    non2xx: 0,
  });
  assert.throws(() => parseWrk2(WRK_OUTPUT, 7500), /wrk2 printed no 50\.000th percentile/);
});

test('the instruction check fails past the saved figure plus its margin, judging the least over processes', () => {
  const figure = (scenario: string, instructionsPerRequest: number) => ({ target: 'service', scenario, instructionsPerRequest });
  const saved = [figure('S1', 100_000), figure('S2', 80_000)];
  // At the margin's edge: 15% over passes, one instruction more fails.
  assert.deepEqual(
    verdicts([figure('S1', 115_000), figure('S2', 92_001)], saved, 0.15).map((v) => [v.scenario, v.over]),
    [
      ['S1', false],
      ['S2', true],
    ],
  );
  // A scenario with no saved figure is not judged; a margin that is not a fraction is refused by name.
  assert.deepEqual(verdicts([figure('S3', 1e9)], saved, 0.15), []);
  assert.throws(() => verdicts([], saved, Number('15%')), /--margin must be a fraction/);
  // One process's V8 state added a third; another did not: the least is judged, and passes.
  const processes = [[figure('S1', 150_000), figure('S2', 79_000)], [figure('S1', 101_000)]];
  assert.deepEqual(
    leastOf(processes).map((f) => [f.scenario, f.instructionsPerRequest]),
    [
      ['S1', 101_000],
      ['S2', 79_000],
    ],
  );
  assert.equal(verdicts(leastOf(processes), saved, 0.15).filter((v) => v.over).length, 0);
  // A regression raises every process: still over.
  assert.equal(verdicts(leastOf([[figure('S1', 150_000)], [figure('S1', 130_000)]]), saved, 0.15)[0]?.over, true);
});

test('a variant is its base target with its settings on top, and is reported beside it in the tracing table', () => {
  defineVariant('b64:OTEL_BSP_MAX_EXPORT_BATCH_SIZE=64');
  defineVariant('b64:OTEL_BSP_SCHEDULE_DELAY=200');
  defineVariant('on:OTEL_TRACES_SAMPLER=always_on');
  const variant = targetOf('service-traced+b64');
  assert.equal(variant.entry, targetOf('service-traced').entry);
  assert.equal(variant.traced, true);
  assert.deepEqual(variant.env, { ...targetOf('service-traced').env, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64', OTEL_BSP_SCHEDULE_DELAY: '200' });
  // A variant's setting wins over its base's own.
  assert.equal(targetOf('service-unsampled').env.OTEL_TRACES_SAMPLER, 'always_off');
  assert.equal(targetOf('service-unsampled+on').env.OTEL_TRACES_SAMPLER, 'always_on');
  assert.equal(targetOf('service+on').env.OTEL_TRACES_SAMPLER, 'always_on');
  assert.throws(() => targetOf('service-traced+nothing'), /no --variant nothing:NAME=VALUE was given/);
  assert.throws(() => targetOf('servce'), /unknown target "servce"/);
  assert.throws(() => targetOf('toString+b64'), /unknown target "toString\+b64"/);
  assert.throws(() => defineVariant('b64=64'), /--variant takes LABEL:NAME=VALUE/);

  const cell = (target: Cell['target'], process: number, cpuMicrosPerRequest: number): Cell => ({
    scenario: 'S1',
    target,
    round: 1,
    process,
    requests: 1000,
    requestsPerSecond: 1e6 / cpuMicrosPerRequest,
    p50Ms: 1,
    p99Ms: 2,
    errors: 0,
    non2xx: 0,
    cpuMicrosPerRequest,
  });
  const report: BenchReport = {
    label: 'variants',
    startedAt: new Date(0).toISOString(),
    minutes: 1,
    machine: { cpus: 2, model: 'test', node: process.version, platform: 'linux x64' },
    loadGenerator: 'wrk',
    pinning: 'none',
    settings: { rounds: 1, seconds: 1, connections: 1, processes: 2, variants: { b64: { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64' } } },
    serviceLogLines: 0,
    cells: [1, 2].flatMap((p) => [cell('service', p, 30), cell('service-traced', p, 45), cell('service-traced+b64', p, 42 + p * 3)]),
    scaling: [],
    peakRss: [],
  };
  const markdown = markdownReport(report);
  assert.match(markdown, /\+b64: the same target with OTEL_BSP_MAX_EXPORT_BATCH_SIZE=64\./);
  assert.match(markdown, /\| S1 \| service-traced \| 1\.50 \| 1\.50–1\.50 \| ≤ 1\.3 \*\*missed\*\* \|/);
  // The variant's row, median over its two processes (1.5 and 1.6), without a bound of its own.
  assert.match(markdown, /\| S1 \| service-traced\+b64 \| 1\.55 \| 1\.50–1\.60 \| {2}\|/);
});

// Timing is never asserted: this only proves that `npm run bench` works end to end (a smoke run of two requests a connection a cell).
test('npm run bench -- --smoke: every target answers every scenario correctly, and both reports are written', { timeout: 240_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'bench/run.ts'), '--smoke', '--out', out, '--label', 'smoke'], {
    cwd: root,
    maxBuffer: 16 << 20,
  });
  const report = JSON.parse(readFileSync(join(out, 'smoke.json'), 'utf8')) as BenchReport;
  const targets = ['service', 'service-logged', 'service-traced', 'service-unsampled', 'baseline', 'node-features', 'fastify', 'fastify-logger', 'express'];
  assert.deepEqual(
    report.cells.map((cell) => `${cell.scenario} ${cell.target}`).sort(),
    ['S1', 'S2', 'S3', 'S4', 'S5', 'S6'].flatMap((scenario) => targets.map((target) => `${scenario} ${target}`)).sort(),
  );
  // S1 and S2 again in each process before the mixed warm-up, for the drift table.
  assert.deepEqual(
    (report.fresh ?? []).map((cell) => `${cell.scenario} ${cell.target}`).sort(),
    ['S1', 'S2'].flatMap((scenario) => targets.map((target) => `${scenario} ${target}`)).sort(),
  );
  for (const cell of [...report.cells, ...(report.fresh ?? [])]) {
    assert.ok(cell.requests > 0, `${cell.scenario} ${cell.target}: no request answered`);
    assert.deepEqual([cell.errors, cell.non2xx], [0, 0], `${cell.scenario} ${cell.target}: socket errors or timeouts, and answers other than 2xx`);
  }
  const loggedRequests = report.cells.filter((cell) => cell.target === 'service-logged').reduce((sum, cell) => sum + cell.requests, 0);
  assert.ok(report.serviceLogLines >= loggedRequests, `logging was off: ${report.serviceLogLines} lines for ${loggedRequests} requests`);
  assert.deepEqual(
    new Set(report.scaling.map((row) => `${row.kind} ${row.target}`)).size,
    2 * 4,
    'scaling: the service, the baseline, the Fastify floor and Express',
  );
  assert.deepEqual(
    report.peakRss.map((c) => c.status),
    [200, 200, 200, 200],
  );
  const markdown = readFileSync(join(out, 'smoke.md'), 'utf8');
  for (const heading of ['## Throughput', '## Goals', '## Drift', '## Tracing', '## Sort scaling', '## Peak memory'])
    assert.ok(markdown.includes(heading), heading);
});
