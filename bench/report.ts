import type { LoadResult } from './load.js';
import type { TargetName } from './targets.js';

export interface Cell extends LoadResult {
  scenario: string;
  target: TargetName;
  round: number;
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
  startedAt: string;
  minutes: number;
  machine: { cpus: number; model: string; node: string; platform: string };
  loadGenerator: string;
  pinning: string;
  settings: Record<string, unknown>;
  serviceLogLines: number;
  cells: Cell[];
  scaling: ScalingRow[];
  peakRss: RssCase[];
}

/** The targets: the service's req/s against the baseline's and Express's, same run. */
export const TARGETS: Readonly<Record<string, { baseline: number; express?: number }>> = {
  S1: { baseline: 0.9, express: 2 },
  S2: { baseline: 0.9, express: 2 },
  S3: { baseline: 0.9, express: 2 },
  S4: { baseline: 0.8 },
};

const mean = (values: readonly number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;
const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const thousands = (value: number): string => Math.round(value).toLocaleString('en');

export interface Summary {
  scenario: string;
  target: TargetName;
  perRound: number[];
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

/** Mean over rounds per scenario and target. */
export function summarize(cells: readonly Cell[]): Summary[] {
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
    };
  });
}

/** Service req/s over another target's, per scenario. */
export function ratios(summaries: readonly Summary[]): Map<string, { baseline: number; fastify: number; express: number }> {
  const rps = (scenario: string, target: TargetName) => summaries.find((s) => s.scenario === scenario && s.target === target)?.requestsPerSecond ?? NaN;
  const scenarios = [...new Set(summaries.map((s) => s.scenario))];
  return new Map(
    scenarios.map((id) => [
      id,
      { baseline: rps(id, 'service') / rps(id, 'baseline'), fastify: rps(id, 'service') / rps(id, 'fastify'), express: rps(id, 'service') / rps(id, 'express') },
    ]),
  );
}

export function markdownReport(report: BenchReport): string {
  const summaries = summarize(report.cells);
  const ratio = ratios(summaries);
  const rpsOf = (scenario: string, target: TargetName) => summaries.find((s) => s.scenario === scenario && s.target === target)?.requestsPerSecond ?? NaN;
  const lines: string[] = [
    `# Benchmark: ${report.label}`,
    '',
    `${report.startedAt}, ${report.minutes} min. ${report.machine.cpus} CPUs (${report.machine.model}), Node ${report.machine.node}, ${report.machine.platform}.`,
    `Load: ${report.loadGenerator}; ${report.pinning}. Rounds: ${report.settings.rounds} of ${report.settings.seconds} s per target and scenario, ` +
      `targets alternating; ${report.settings.connections} connections unless the scenario says otherwise.`,
    `Service at production defaults (LOG_LEVEL=info): ${report.serviceLogLines.toLocaleString('en')} request log lines written.`,
    '',
    '## Throughput',
    '',
    '| Scenario | Target | req/s by round | req/s | p50 ms | p99 ms | errors | × baseline | × Fastify floor | × Express |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const s of summaries) {
    const ofBaseline = s.requestsPerSecond / rpsOf(s.scenario, 'baseline');
    const ofFloor = s.requestsPerSecond / rpsOf(s.scenario, 'fastify');
    const ofExpress = s.requestsPerSecond / rpsOf(s.scenario, 'express');
    lines.push(
      `| ${s.scenario} | ${s.target} | ${s.perRound.map(thousands).join(' / ')} | ${thousands(s.requestsPerSecond)} | ${fixed(s.p50Ms, 2)} | ${fixed(s.p99Ms, 2)} | ` +
        `${s.errors + s.non2xx} | ${fixed(ofBaseline, 2)} | ${fixed(ofFloor, 2)} | ${fixed(ofExpress, 2)} |`,
    );
  }
  lines.push('', '## Targets (service req/s over the others\', same run)', '', '| Scenario | × baseline | goal | × Express | goal | × Fastify floor (no goal) |', '| --- | ---: | --- | ---: | --- | ---: |');
  for (const [id, goal] of Object.entries(TARGETS)) {
    const r = ratio.get(id);
    if (r === undefined) continue;
    const verdict = (value: number, wanted: number | undefined) => (wanted === undefined ? '–' : `≥ ${wanted} ${value >= wanted ? 'met' : '**missed**'}`);
    lines.push(
      `| ${id} | ${fixed(r.baseline, 2)} | ${verdict(r.baseline, goal.baseline)} | ${fixed(r.express, 2)} | ${verdict(r.express, goal.express)} | ${fixed(r.fastify, 2)} |`,
    );
  }

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

  lines.push('', '## Peak memory for a maximum-size body (fresh service each, VmHWM)', '', '| Body | Size | Status | ms | RSS idle MiB | peak RSS MiB |', '| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const c of report.peakRss) {
    lines.push(`| ${c.name} | ${(c.bodyBytes / 1024 / 1024).toFixed(2)} MiB | ${c.status} | ${fixed(c.ms, 0)} | ${c.idleMiB} | ${c.peakMiB} |`);
  }
  return `${lines.join('\n')}\n`;
}
