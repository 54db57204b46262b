import { manySection, type ManyRow } from './many.js';
import { clientBatchingSection, type ClientBatchRow } from './client-batching.js';
import type { LoadResult, SteadyResult } from './load.js';
import type { TargetName } from './targets.js';

export interface Cell extends LoadResult {
  scenario: string;
  target: TargetName;
  round: number;
  /** Which of the run's processes of each target answered (1, 2, 3...); reports made before processes were counted have none. */
  process?: number;
  /** The server process's CPU time (user and system) over the requests it answered; absent from older reports. */
  cpuMicrosPerRequest?: number;
  /** The server process's peak RSS (VmHWM) after the load; absent from older reports. */
  peakRssMiB?: number;
  /** The service's longest event-loop delay during the load (prom-client's, reset at each scrape); the services only. */
  loopDelayMaxMs?: number;
}

/** One target at one fixed arrival rate (run.ts's steady part), with what its probe saw inside it. */
export interface SteadyCell extends SteadyResult {
  target: TargetName;
  process: number;
  /** The rate as a fraction of `capacity`, the untraced service's requests per CPU-second in this set of processes. */
  fraction: number;
  capacity: number;
  cpuMicrosPerRequest: number;
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
  gcPauseMsPerSecond: number;
  gcLongestPauseMs: number;
  allocatedBytesPerRequest: number;
}

export interface ScalingRow {
  kind: 'numbers' | 'strings';
  size: number;
  target: TargetName;
  requests: number;
  bodyBytes: number;
  medianMs: number;
  nsPerElement: number;
}

export interface RssCase {
  name: string;
  bodyBytes: number;
  status: number;
  ms: number;
  idleMiB: number;
  peakMiB: number;
}

export interface BenchReport {
  label: string;
  /** The commit measured (`-dirty` when the tree had changes) and the command that ran; absent from reports made before them. */
  commit?: string;
  command?: string;
  startedAt: string;
  minutes: number;
  machine: { cpus: number; model: string; node: string; platform: string };
  loadGenerator: string;
  pinning: string;
  settings: {
    rounds: number;
    seconds: number;
    connections: number;
    processes?: number;
    env?: Record<string, string>;
    /** `--variant` settings by label: target `BASE+LABEL` ran with them. */
    variants?: Record<string, Record<string, string>>;
    [other: string]: unknown;
  };
  serviceLogLines: number;
  cells: Cell[];
  /** The `--fresh` scenarios measured in each process before the mixed warm-up; absent from reports made before it. */
  fresh?: Cell[];
  scaling: ScalingRow[];
  peakRss: RssCase[];
  /** Issue 27's batches and stream (many.ts); absent from reports made before it. */
  many?: ManyRow[];
  /** The client's batching (client-batching.ts); absent from reports made before it. */
  client?: ClientBatchRow[];
  /** The steady-rate part (run.ts's `steady`); absent from reports made before it. */
  steady?: SteadyCell[];
}

/**
 * The goals: the service (default settings) against the bare Fastify floor, Fastify with its
 * default request logging and Express; the service logging every request against the floor.
 */
interface Goal {
  /** Over what, by which target. */
  readonly of: TargetName;
  readonly target: TargetName;
  readonly atLeast: number;
}
// The single small call: at least the featured floor (bare node:http doing what the service does by default), and aiming at 0.8 of bare Fastify.
const single: Goal[] = [
  { target: 'service', of: 'node-features', atLeast: 1 },
  { target: 'service', of: 'fastify', atLeast: 0.8 },
  { target: 'service', of: 'fastify-logger', atLeast: 1.5 },
  { target: 'service', of: 'express', atLeast: 2 },
  { target: 'service-logged', of: 'fastify', atLeast: 0.75 },
];
const small = (floor: number): Goal[] => [
  { target: 'service', of: 'fastify', atLeast: floor },
  { target: 'service', of: 'fastify-logger', atLeast: 1.5 },
  { target: 'service', of: 'express', atLeast: 2 },
  { target: 'service-logged', of: 'fastify', atLeast: 0.75 },
];
// An A/B (--before): this build no slower than the one before it.
const ab: Goal = { target: 'service', of: 'service-before', atLeast: 1 };
const GOALS: Readonly<Record<string, readonly Goal[]>> = {
  S1: [...single, ab],
  S2: [...single, ab],
  S3: [...small(0.9), ab],
  S4: [{ target: 'service', of: 'fastify', atLeast: 1 }, ab],
  S5: [{ target: 'service', of: 'fastify', atLeast: 1 }],
  S6: [{ target: 'service', of: 'fastify', atLeast: 1 }],
};

const mean = (values: readonly number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;
const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const thousands = (value: number): string => Math.round(value).toLocaleString('en');

interface Summary {
  scenario: string;
  target: TargetName;
  perRound: number[];
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** The median over rounds and processes. */
  cpuMicrosPerRequest: number;
}

/** Mean over rounds per scenario and target. */
function summarize(cells: readonly Cell[]): Summary[] {
  const groups = new Map<string, Cell[]>();
  for (const cell of cells) {
    const key = `${cell.scenario}\u0000${cell.target}`;
    groups.set(key, [...(groups.get(key) ?? []), cell]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0] as Cell;
    return {
      scenario: first.scenario,
      target: first.target,
      perRound: group.map((c) => Math.round(c.requestsPerSecond)),
      requestsPerSecond: mean(group.map((c) => c.requestsPerSecond)),
      p50Ms: mean(group.map((c) => c.p50Ms)),
      p99Ms: mean(group.map((c) => c.p99Ms)),
      errors: group.reduce((sum, c) => sum + c.errors, 0),
      non2xx: group.reduce((sum, c) => sum + c.non2xx, 0),
      cpuMicrosPerRequest: median(group.map((c) => c.cpuMicrosPerRequest ?? NaN)),
    };
  });
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = (sorted.length - 1) / 2;
  return ((sorted[Math.floor(middle)] ?? NaN) + (sorted[Math.ceil(middle)] ?? NaN)) / 2;
};

/**
 * `target`'s req/s over `of`'s in one scenario, for each of the run's processes (the ratio of the
 * means over its rounds): their median, lowest and highest. One process's JIT state can move a
 * figure by a third, so the spread over processes is the one that tells a difference. A run of one
 * process gives the ratio of each round instead.
 */
function ratio(
  cells: readonly Cell[],
  scenario: string,
  target: TargetName,
  of: TargetName,
  field: 'requestsPerSecond' | 'cpuMicrosPerRequest' = 'requestsPerSecond',
): { median: number; low: number; high: number; over: 'processes' | 'rounds' } {
  const chosen = cells.filter((c) => c.scenario === scenario);
  const processes = [...new Set(chosen.map((c) => c.process ?? 1))];
  const over = processes.length > 1 ? 'processes' : 'rounds';
  const groups =
    over === 'processes'
      ? processes.map((p) => chosen.filter((c) => (c.process ?? 1) === p))
      : [...new Set(chosen.map((c) => c.round))].map((round) => chosen.filter((c) => c.round === round));
  const rps = (group: readonly Cell[], name: TargetName) => mean(group.filter((c) => c.target === name).map((c) => c[field] ?? NaN));
  const each = groups.map((group) => rps(group, target) / rps(group, of)).filter(Number.isFinite);
  return { median: median(each), low: Math.min(...each), high: Math.max(...each), over };
}

export function markdownReport(report: BenchReport): string {
  const summaries = summarize(report.cells);
  const processes = report.settings.processes ?? 1;
  const rpsOf = (scenario: string, target: TargetName) => summaries.find((s) => s.scenario === scenario && s.target === target)?.requestsPerSecond ?? NaN;
  const lines: string[] = [
    `# Benchmark: ${report.label}`,
    '',
    ...(report.commit === undefined ? [] : [`At ${report.commit}: \`${report.command ?? 'npm run bench'}\`.`, '']),
    `${report.startedAt}, ${report.minutes} min. ${report.machine.cpus} CPUs (${report.machine.model}), Node ${report.machine.node}, ${report.machine.platform}.`,
    `Load: ${report.loadGenerator}; ${report.pinning}. ${processes} process${processes === 1 ? '' : 'es'} of each target, one after another, each after the mixed warm-up; ` +
      `in each, ${report.settings.rounds} round${report.settings.rounds === 1 ? '' : 's'} of ${report.settings.seconds} s per target and scenario, targets alternating; ${report.settings.connections} connections unless the scenario says otherwise.`,
    `service: production defaults (LOG_LEVEL=info, ACCESS_LOG=minimal); service-logged: the same with ACCESS_LOG=all, which wrote ${report.serviceLogLines.toLocaleString('en')} request log lines. ` +
      'node-features: bare node:http with what the service does per request by default (a request id, its headers, CORS headers, metrics; no log line unless FEATURES has log); fastify-logger: the Fastify floor with `logger: true`.',
    ...(Object.keys(report.settings.env ?? {}).length > 0
      ? [
          `Every target also ran with ${Object.entries(report.settings.env ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}.`,
        ]
      : []),
    ...Object.entries(report.settings.variants ?? {}).map(
      ([label, settings]) =>
        `+${label}: the same target with ${Object.entries(settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')}.`,
    ),
    '',
    '## Throughput',
    '',
    '| Scenario | Target | req/s by process and round | req/s | CPU µs/request | p50 ms | p99 ms | errors | × baseline | × Fastify floor | × Express |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const s of summaries) {
    const ofBaseline = s.requestsPerSecond / rpsOf(s.scenario, 'baseline');
    const ofFloor = s.requestsPerSecond / rpsOf(s.scenario, 'fastify');
    const ofExpress = s.requestsPerSecond / rpsOf(s.scenario, 'express');
    lines.push(
      `| ${s.scenario} | ${s.target} | ${s.perRound.map(thousands).join(' / ')} | ${thousands(s.requestsPerSecond)} | ${fixed(s.cpuMicrosPerRequest, 1)} | ${fixed(s.p50Ms, 2)} | ${fixed(s.p99Ms, 2)} | ` +
        `${s.errors + s.non2xx} | ${fixed(ofBaseline, 2)} | ${fixed(ofFloor, 2)} | ${fixed(ofExpress, 2)} |`,
    );
  }
  lines.push(
    '',
    `## Goals (req/s over req/s, same run: the median over ${processes > 1 ? `${processes} processes of each target` : 'rounds'}, and the lowest and highest)`,
    '',
    '| Scenario | Target | over | ratio | spread | goal |',
    '| --- | --- | --- | ---: | --- | --- |',
  );
  for (const [id, goals] of Object.entries(GOALS)) {
    for (const goal of goals) {
      const r = ratio(report.cells, id, goal.target, goal.of);
      if (!Number.isFinite(r.median)) continue;
      lines.push(
        `| ${id} | ${goal.target} | ${goal.of} | ${fixed(r.median, 2)} | ${fixed(r.low, 2)}–${fixed(r.high, 2)} | ≥ ${goal.atLeast} ${r.median >= goal.atLeast ? 'met' : '**missed**'} |`,
      );
    }
    const toBaseline = ratio(report.cells, id, 'service', 'baseline');
    if (Number.isFinite(toBaseline.median))
      lines.push(
        `| ${id} | service | baseline | ${fixed(toBaseline.median, 2)} | ${fixed(toBaseline.low, 2)}–${fixed(toBaseline.high, 2)} | (for reference) |`,
      );
  }

  lines.push(...driftSection(report.fresh ?? [], report.cells));
  lines.push(...tracingSection(report.cells, report.settings.env ?? {}));
  lines.push(...steadySection(report.steady ?? []));
  // A run of some parts only (--parts) leaves the others out rather than printing empty tables.
  if (report.scaling.length > 0) lines.push(...scalingSection(report));
  lines.push(...manySection(report.many ?? []));
  lines.push(...clientBatchingSection(report.client ?? []));
  if (report.peakRss.length > 0) lines.push(...peakRssSection(report));
  return `${lines.join('\n')}\n`;
}

/**
 * The headline of a run, the table docs/performance.md shows (a plain `npm run bench` writes it
 * there, bench/run.ts): per scenario the service's req/s, its ratio to bare Fastify's and
 * Express's (the median over processes, and the lowest and highest), CPU a request beside the
 * floors', and the CPU that logging every request and tracing add; then the largest bodies' RSS.
 *
 * @example
 * headline(report, scenarios()) //=> '`npm run bench` at 6ac8f85, ...\n\n| Scenario | ...'
 */
export function headline(report: BenchReport, titles: ReadonlyArray<{ id: string; title: string }>): string {
  const summaries = summarize(report.cells);
  const of = (scenario: string, target: TargetName) => summaries.find((s) => s.scenario === scenario && s.target === target);
  const spread = (r: { median: number; low: number; high: number }) => `${fixed(r.median, 2)} (${fixed(r.low, 2)}–${fixed(r.high, 2)})`;
  const lines = [
    `\`${report.command ?? 'npm run bench'}\` at ${report.commit ?? 'an unnamed commit'}, ${report.startedAt.slice(0, 10)}, Node ${report.machine.node}, ` +
      `${report.machine.cpus} CPUs, ${report.loadGenerator.split(' ').slice(0, 2).join(' ')}, ${report.settings.processes ?? 1} processes a target ` +
      `([bench/results/${report.label}.md](../bench/results/${report.label}.md)). CPU a request over the service's: logging every request, and tracing with every span exported or sampled out.`,
    '',
    '| Scenario | service req/s | × bare Fastify | × Express | CPU µs a request: service, Fastify, node:http | `ACCESS_LOG=all` | traced / sampled out |',
    '| --- | ---: | --- | ---: | --- | ---: | --- |',
  ];
  for (const { id, title } of titles) {
    const service = of(id, 'service');
    if (service === undefined) continue;
    const cpu = (target: TargetName) => fixed(of(id, target)?.cpuMicrosPerRequest ?? NaN, 1);
    const overService = (target: TargetName) => fixed(ratio(report.cells, id, target, 'service', 'cpuMicrosPerRequest').median, 2);
    lines.push(
      `| ${id} ${title} | ${thousands(service.requestsPerSecond)} | ${spread(ratio(report.cells, id, 'service', 'fastify'))} | ` +
        `${fixed(ratio(report.cells, id, 'service', 'express').median, 2)} | ${cpu('service')}, ${cpu('fastify')}, ${cpu('baseline')} | ` +
        `${overService('service-logged')} | ${overService('service-traced')} / ${overService('service-unsampled')} |`,
    );
  }
  if (report.peakRss.length > 0) {
    lines.push('', `Peak RSS, the largest bodies, a fresh process each: ${report.peakRss.map((c) => `${c.name} ${c.peakMiB} MiB`).join('; ')}.`);
  }
  return `${lines.join('\n')}\n`;
}

function scalingSection(report: BenchReport): string[] {
  const lines: string[] = [];
  lines.push(
    '',
    '## Sort scaling (one request at a time, median)',
    '',
    'Time per request includes the upload, parsing and the answer. "Step vs n log n" is how much the service\'s time grew from the ' +
      'size above, over how much n log n grew: 1 is n log n growth, below 1 means fixed costs still dominate, a cliff shows as well above 1.',
    '',
    '| Elements | Kind | Body | service ms | service ns/element | step vs n log n | baseline ms | Fastify floor ms | Express ms |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const kind of ['numbers', 'strings'] as const) {
    const rows = report.scaling.filter((row) => row.kind === kind);
    const of = (size: number, target: TargetName) => rows.find((row) => row.size === size && row.target === target);
    const sizes = [...new Set(rows.map((row) => row.size))];
    const nLogN = (n: number) => n * Math.log2(n);
    sizes.forEach((size, i) => {
      const service = of(size, 'service') as ScalingRow;
      const previous = i === 0 ? undefined : of(sizes[i - 1] as number, 'service');
      const factor = previous ? service.medianMs / previous.medianMs / (nLogN(size) / nLogN(previous.size)) : NaN;
      lines.push(
        `| ${thousands(size)} | ${kind} | ${(service.bodyBytes / 1024 / 1024).toFixed(2)} MiB | ${fixed(service.medianMs, 2)} | ${fixed(service.nsPerElement, 0)} | ` +
          `${fixed(factor, 2)} | ${fixed(of(size, 'baseline')?.medianMs ?? NaN, 2)} | ${fixed(of(size, 'fastify')?.medianMs ?? NaN, 2)} | ` +
          `${fixed(of(size, 'express')?.medianMs ?? NaN, 2)} |`,
      );
    });
  }

  return lines;
}

function peakRssSection(report: BenchReport): string[] {
  const lines: string[] = [];
  lines.push(
    '',
    '## Peak memory for a maximum-size body (fresh service each, VmHWM)',
    '',
    '| Body | Size | Status | ms | RSS idle MiB | peak RSS MiB |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const c of report.peakRss) {
    lines.push(`| ${c.name} | ${(c.bodyBytes / 1024 / 1024).toFixed(2)} MiB | ${c.status} | ${fixed(c.ms, 0)} | ${c.idleMiB} | ${c.peakMiB} |`);
  }
  return lines;
}

// What tracing may cost over the untraced service, in CPU time per request (issue 48's bounds);
// the build before (--before) is listed beside them, without a bound.
const TRACING_BOUNDS: ReadonlyArray<{ target: TargetName; cpuAtMost?: number; p99AtMost?: number }> = [
  { target: 'service-unsampled', cpuAtMost: 1.08 },
  { target: 'service-traced', cpuAtMost: 1.3, p99AtMost: 1.5 },
  { target: 'service-traced-before' },
];

// A service process after the mixed warm-up may cost at most this much a request over the same process fresh (issue 59).
const DRIFT_AT_MOST = 1.05;

/**
 * Drift: each process's CPU a request after the mixed warm-up over its own when fresh (measured
 * as it started, after that scenario's load alone): median over processes, lowest and highest.
 * The services' bound is judged; the other targets show what the same traffic does to them.
 */
function driftSection(fresh: readonly Cell[], mixed: readonly Cell[]): string[] {
  if (fresh.length === 0) return [];
  const lines = [
    '',
    `## Drift (CPU µs a request after the mixed warm-up over the same process fresh: median over processes, lowest and highest)`,
    '',
    '| Scenario | Target | fresh µs | mixed µs | ratio | spread | bound |',
    '| --- | --- | ---: | ---: | ---: | --- | --- |',
  ];
  const cpuOf = (cells: readonly Cell[], scenario: string, target: TargetName, process: number) =>
    mean(cells.filter((c) => c.scenario === scenario && c.target === target && (c.process ?? 1) === process).map((c) => c.cpuMicrosPerRequest ?? NaN));
  for (const scenario of [...new Set(fresh.map((c) => c.scenario))]) {
    for (const target of [...new Set(fresh.map((c) => c.target))]) {
      const processes = [...new Set(fresh.filter((c) => c.target === target).map((c) => c.process ?? 1))];
      const before = processes.map((p) => cpuOf(fresh, scenario, target, p));
      const after = processes.map((p) => cpuOf(mixed, scenario, target, p));
      const ratios = processes.map((_, i) => (after[i] as number) / (before[i] as number)).filter(Number.isFinite);
      if (ratios.length === 0) continue;
      const bound = target.startsWith('service') ? `≤ ${DRIFT_AT_MOST} ${median(ratios) <= DRIFT_AT_MOST ? 'met' : '**missed**'}` : '';
      lines.push(
        `| ${scenario} | ${target} | ${fixed(median(before), 1)} | ${fixed(median(after), 1)} | ${fixed(median(ratios), 2)} | ${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)} | ${bound} |`,
      );
    }
  }
  return lines;
}

/**
 * The traced targets over the untraced service, per process (its CPU µs a request and its p99,
 * over the service's in the same set of processes): median, lowest and highest. A sampler given
 * with --env is every target's, so the bounds, each for its own sampler, are not judged.
 */
function tracingSection(cells: readonly Cell[], env: Readonly<Record<string, string>>): string[] {
  const samplerGiven = env.OTEL_TRACES_SAMPLER !== undefined;
  const lines: string[] = [];
  for (const scenario of [...new Set(cells.map((c) => c.scenario))]) {
    const chosen = cells.filter((c) => c.scenario === scenario);
    const processes = [...new Set(chosen.map((c) => c.process ?? 1))];
    const of = (process: number, target: TargetName, field: 'cpuMicrosPerRequest' | 'p99Ms') =>
      mean(chosen.filter((c) => (c.process ?? 1) === process && c.target === target).map((c) => c[field] ?? NaN));
    // Each bounded target's variants (`service-traced+LABEL`) beside it, without a bound: a setting compared in the same run.
    const targets = [...new Set(chosen.map((c) => c.target))];
    const rows = TRACING_BOUNDS.flatMap((bound) => [bound, ...targets.filter((t) => t.startsWith(`${bound.target}+`)).map((target) => ({ target }))]);
    for (const bound of rows as ReadonlyArray<(typeof TRACING_BOUNDS)[number]>) {
      const ratios = (field: 'cpuMicrosPerRequest' | 'p99Ms') =>
        processes.map((p) => of(p, bound.target, field) / of(p, 'service', field)).filter(Number.isFinite);
      const cpu = ratios('cpuMicrosPerRequest');
      if (cpu.length === 0) continue;
      if (lines.length === 0)
        lines.push(
          '',
          '## Tracing (the traced targets over the untraced service, same set of processes: median, lowest and highest)',
          '',
          '| Scenario | Target | CPU µs a request, ratio | spread | bound | p99, ratio | bound | event-loop delay, longest ms | peak RSS MiB |',
          '| --- | --- | ---: | --- | --- | ---: | --- | ---: | ---: |',
        );
      const p99 = ratios('p99Ms');
      const own = (field: 'loopDelayMaxMs' | 'peakRssMiB') => chosen.filter((c) => c.target === bound.target).map((c) => c[field] ?? NaN);
      const verdict = (value: number, atMost: number | undefined) =>
        atMost === undefined ? '' : samplerGiven ? `(not judged: the sampler is --env's)` : `≤ ${atMost} ${value <= atMost ? 'met' : '**missed**'}`;
      lines.push(
        `| ${scenario} | ${bound.target} | ${fixed(median(cpu), 2)} | ${fixed(Math.min(...cpu), 2)}–${fixed(Math.max(...cpu), 2)} | ${verdict(median(cpu), bound.cpuAtMost)} | ` +
          `${fixed(median(p99), 2)} | ${verdict(median(p99), bound.p99AtMost)} | ` +
          `${fixed(Math.max(...own('loopDelayMaxMs')), 1)} | ${fixed(Math.max(...own('peakRssMiB')), 0)} |`,
      );
    }
  }
  return lines;
}

/**
 * The steady-rate part: per rate and target, the median over processes of each figure (the
 * highest for the longest pauses and delays), and its p99 over the untraced service's in the same
 * set of processes.
 */
function steadySection(cells: readonly SteadyCell[]): string[] {
  if (cells.length === 0) return [];
  const lines = [
    '',
    "## At a fixed arrival rate (S1; wrk2, latency from each request's intended send time; medians over processes, the longest pause and delay the highest)",
    '',
    "| Rate | Target | p50 ms | p99 ms | p99.9 ms | max ms | p99 over the service's, median (spread) | CPU µs a request | event-loop delay, longest ms | GC pauses ms/s | longest GC pause ms | bytes allocated a request |",
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const fraction of [...new Set(cells.map((c) => c.fraction))]) {
    const atRate = cells.filter((c) => c.fraction === fraction);
    const rates = atRate.map((c) => c.rate);
    for (const target of [...new Set(atRate.map((c) => c.target))]) {
      const own = atRate.filter((c) => c.target === target);
      const mid = (field: keyof SteadyCell) => median(own.map((c) => Number(c[field])));
      const most = (field: keyof SteadyCell) => Math.max(...own.map((c) => Number(c[field])));
      const ratios = own.map((c) => c.p99Ms / (atRate.find((s) => s.target === 'service' && s.process === c.process)?.p99Ms ?? NaN)).filter(Number.isFinite);
      const overService = ratios.length === 0 ? '–' : `${fixed(median(ratios), 2)} (${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)})`;
      lines.push(
        `| ${Math.round(fraction * 100)}% (${Math.min(...rates)}–${Math.max(...rates)}/s) | ${target} | ${fixed(mid('p50Ms'), 2)} | ${fixed(mid('p99Ms'), 2)} | ` +
          `${fixed(mid('p999Ms'), 2)} | ${fixed(mid('maxMs'), 1)} | ${overService} | ${fixed(mid('cpuMicrosPerRequest'), 1)} | ${fixed(most('loopDelayMaxMs'), 1)} | ` +
          `${fixed(mid('gcPauseMsPerSecond'), 1)} | ${fixed(most('gcLongestPauseMs'), 1)} | ${fixed(mid('allocatedBytesPerRequest'), 0)} |`,
      );
    }
  }
  return lines;
}

// The per-request regression check of bench/instructions.ts (`--check`), tested by test/bench.test.ts.

/**
 * The per-request regression check of bench/instructions.ts: a figure measured now against
 * the one saved in bench/results/per-request/instructions.json. What a process's V8 state adds (a
 * collection, a burst of compiling, code left in a lower tier, deprecated maps) only ever adds
 * instructions, so the least figure over its windows, and over the processes measured, is the one
 * compared: a regression in the code raises every process, the machine's state only some.
 */

/** One target's figure for one scenario: its instructions per request. */
export interface InstructionFigure {
  readonly target: string;
  readonly scenario: string;
  readonly instructionsPerRequest: number;
}

export interface Verdict {
  readonly target: string;
  readonly scenario: string;
  readonly measured: number;
  readonly saved: number;
  /** measured / saved */
  readonly ratio: number;
  readonly over: boolean;
}

/**
 * The verdict on each figure that has a saved one: over when it is more than `margin` (a
 * fraction) above it. A figure with none saved is left out.
 *
 * @example
 * verdicts([{ target: 'service', scenario: 'S1', instructionsPerRequest: 120_000 }],
 *          [{ target: 'service', scenario: 'S1', instructionsPerRequest: 100_000 }], 0.15)[0].over //=> true
 */
export function verdicts(measured: readonly InstructionFigure[], saved: readonly InstructionFigure[], margin: number): Verdict[] {
  if (!(margin >= 0)) throw new RangeError(`--margin must be a fraction of at least 0, such as 0.15, not ${margin}`);
  return measured.flatMap((figure) => {
    const before = saved.find((s) => s.target === figure.target && s.scenario === figure.scenario);
    if (before === undefined) return [];
    const ratio = figure.instructionsPerRequest / before.instructionsPerRequest;
    return [
      {
        target: figure.target,
        scenario: figure.scenario,
        measured: figure.instructionsPerRequest,
        saved: before.instructionsPerRequest,
        ratio,
        over: ratio > 1 + margin,
      },
    ];
  });
}

/**
 * The least figure of each target and scenario over several processes' measurements.
 *
 * @example
 * leastOf([[{ target: 's', scenario: 'S1', instructionsPerRequest: 150 }], [{ target: 's', scenario: 'S1', instructionsPerRequest: 120 }]])
 * //=> [{ target: 's', scenario: 'S1', instructionsPerRequest: 120 }]
 */
export function leastOf<T extends InstructionFigure>(processes: ReadonlyArray<readonly T[]>): T[] {
  const least = new Map<string, T>();
  for (const figures of processes)
    for (const figure of figures) {
      const key = `${figure.target}\t${figure.scenario}`;
      const kept = least.get(key);
      if (kept === undefined || figure.instructionsPerRequest < kept.instructionsPerRequest) least.set(key, figure);
    }
  return [...least.values()];
}
