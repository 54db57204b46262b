/**
 * Where a traced request's CPU goes, by stage: each target (by default the untraced service, the
 * service with tracing on but every request sampled out, and the service exporting every span to
 * the bench's OTLP receiver) gets the bench's whole mixed warm-up (bench/warm-up.ts), a 2 s load,
 * then `perf record -g` samples its CPU (1,999 a second, JIT code named by `--perf-basic-prof`)
 * during a 5 s wrk load of one scenario. Each sample goes to the innermost frame of its stack that
 * belongs to a stage (STAGES below, in the order a request meets them), unless a frame of the
 * service's or another library's code comes first (OTHER_CODE); a sample in no stage is "the rest":
 * what the untraced service does too. Figures are samples per 1,000 requests, averaged over the
 * processes: one sample per 1,000 requests is 0.5 µs of CPU a request. `--detail` lists the frames
 * that decided, and each target's difference from the first, frame by frame.
 *
 *   npx tsx bench/tracing-stages.ts                                   # S1, 2 processes a target
 *   npx tsx bench/tracing-stages.ts --scenario S2 --processes 3 --env OTEL_EXPORTER_OTLP_PROTOCOL=http/json
 *
 * Build first (`npm run build`); needs wrk and perf (Debian's linux-perf), as root or with
 * perf_event_paranoid at most 1. Runs on the Node.js that runs it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateLoad } from './load.js';
import { scenarios } from './scenarios.js';
import { cpuMicroseconds, startReceiver, startTarget, TARGETS, type TargetName } from './targets.js';
import { loadOf, warmUp, WARM_UP_PASSES } from './warm-up.js';

const { values: flags } = parseArgs({
  options: {
    targets: { type: 'string', default: 'service,service-unsampled,service-traced' },
    scenario: { type: 'string', default: 'S1' },
    processes: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    env: { type: 'string', multiple: true, default: [] },
    detail: { type: 'boolean', default: false },
  },
});
const scenario = scenarios().find((s) => s.id === flags.scenario);
if (scenario === undefined) throw new Error(`--scenario: no scenario ${JSON.stringify(flags.scenario)}`);
for (const [flag, text] of [
  ['--processes', flags.processes],
  ['--seconds', flags.seconds],
] as const)
  if (!/^[1-9]\d*$/.test(text)) throw new Error(`${flag} takes a whole number of at least 1, not ${JSON.stringify(text)}`);
const names = flags.targets.split(',').map((name) => {
  if (!(name in TARGETS)) throw new Error(`--targets: unknown target ${JSON.stringify(name)}`);
  return name as TargetName;
});
const env = Object.fromEntries(
  flags.env.map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env takes NAME=VALUE, not ${JSON.stringify(pair)}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
const processes = Number(flags.processes);

/**
 * The stages, matched against a frame's symbol (JIT frames name their file). The innermost frame
 * that matches decides, so pino called from the tracing hook counts as the log binding, and the
 * exporter's HTTP request made from the batch processor's timer counts as the export.
 */
const STAGES: ReadonlyArray<readonly [stage: string, frame: RegExp]> = [
  [
    'context extraction (traceparent)',
    /@opentelemetry\/core\/dist\/(trace\/W3CTraceContextPropagator|propagation\/|baggage\/)|@opentelemetry\/api\/.*propagation/,
  ],
  [
    'span start (ids, sampler)',
    /@opentelemetry\/sdk-trace\/dist\/(Tracer|sampler\/|Sampler|platform\/node\/RandomIdGenerator)|@opentelemetry\/api\/.*(NonRecordingSpan|trace-api|context-utils)/,
  ],
  [
    'span attributes',
    /@opentelemetry\/core\/dist\/common\/attributes|@opentelemetry\/sdk-trace\/dist\/Span\.mjs:\d+:\d+ ?$|(setAttributes?|_truncateToSize|_truncateToLimitUtil) .*@opentelemetry\/sdk-trace/,
  ],
  ['span end', /\bend .*@opentelemetry\/sdk-trace\/dist\/Span|@opentelemetry\/core\/dist\/common\/time|MultiSpanProcessor/],
  ['batch processor', /@opentelemetry\/sdk-trace\/dist\/(platform\/node\/)?export\//],
  ['OTLP encoding', /@opentelemetry\/otlp-transformer\/|\/dist\/http\/observability\/(otlp-protobuf|protobuf-writer)\.js/],
  ['export HTTP request', /@opentelemetry\/otlp-exporter-base\/|node:_http_client|node:_http_agent/],
  ['async context', /@opentelemetry\/context-async-hooks|AsyncLocalStorage|async_context_frame|AsyncContextFrame|PromiseHook/],
  ['log binding (pino child)', /node_modules\/pino\//],
  ["the service's tracing hooks", /\/dist\/http\/observability\/tracing\.js/],
  [
    'garbage collection',
    /v8::internal::(Heap|Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkSweepCollector|MinorMS|ConcurrentMarking|Sweeper|GCTracer|IncrementalMarking|MemoryAllocator)/,
  ],
];
const REST = 'the rest (what the untraced service does too)';

/**
 * Code of the service or of a library that is not tracing's. A hook that calls Fastify's `done`
 * runs the next hooks, and the route's parsing, inside its own frame: what they do is the rest,
 * not the hook, so the walk from the leaf stops at such a frame.
 */
const OTHER_CODE = /\/node_modules\/(?!@opentelemetry\/|pino\/)|\/dist\/(?!http\/observability\/(tracing|otlp-protobuf|protobuf-writer|otlp-exporter)\.js)/;

function stageOf(stack: readonly string[]): { stage: string; frame: string } {
  // stack[0] is the leaf: the innermost frame that names a stage decides, unless other code comes first.
  for (const frame of stack) {
    for (const [stage, pattern] of STAGES) if (pattern.test(frame)) return { stage, frame };
    if (OTHER_CODE.test(frame)) break;
  }
  return { stage: REST, frame: stack[0] ?? '' };
}

const work = mkdtempSync(join(tmpdir(), 'tracing-stages-'));
const [serverPin, loadPin] = [
  ['taskset', '-c', '0'],
  ['taskset', '-c', '1'],
];
const receiver = names.some((name) => TARGETS[name].traced) ? await startReceiver(loadPin, work) : undefined;
const byTarget = new Map<TargetName, { stages: Map<string, number>; frames: Map<string, number>; cpuMicros: number[] }>();
try {
  for (let round = 0; round < processes; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const target = await startTarget(name, serverPin, work, env, ['--perf-basic-prof', '--interpreted-frames-native-stack']);
      try {
        await warmUp(target.base, { passes: WARM_UP_PASSES, loads: 3, generator: 'wrk', pin: loadPin, workDir: work, connections: 50 });
        const load = loadOf(target.base, scenario, work, 50);
        await generateLoad('wrk', { ...load, seconds: 2 }, loadPin, work);
        const data = join(work, `${name}-${round}.data`);
        const recording = spawn('perf', ['record', '-g', '-F', '1999', '-p', String(target.pid), '-o', data, '--', 'sleep', flags.seconds], {
          stdio: 'ignore',
        });
        const cpuBefore = cpuMicroseconds(target.pid);
        const result = await generateLoad('wrk', { ...load, seconds: Number(flags.seconds) }, loadPin, work);
        const cpuMicros = (cpuMicroseconds(target.pid) - cpuBefore) / result.requests;
        await once(recording, 'exit');
        const sums = byTarget.get(name) ?? { stages: new Map<string, number>(), frames: new Map<string, number>(), cpuMicros: [] };
        byTarget.set(name, sums);
        sums.cpuMicros.push(cpuMicros);
        const script = execFileSync('perf', ['script', '-i', data, '-F', 'ip,sym'], {
          encoding: 'utf8',
          maxBuffer: 1024 * 1024 * 1024,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        for (const sample of script.split('\n\n')) {
          const stack = sample
            .split('\n')
            .map((line) => line.trim().replace(/^[0-9a-f]+\s+/, ''))
            .filter((line) => line !== '');
          if (stack.length === 0) continue;
          const { stage, frame } = stageOf(stack);
          const weight = 1000 / result.requests / processes;
          sums.stages.set(stage, (sums.stages.get(stage) ?? 0) + weight);
          const key = `${stage}: ${frame.replace(/ \(.*\)$/, '')}`;
          sums.frames.set(key, (sums.frames.get(key) ?? 0) + weight);
        }
        process.stderr.write(`${round + 1} ${name}: ${Math.round(result.requestsPerSecond)} req/s, ${cpuMicros.toFixed(1)} µs CPU a request\n`);
      } finally {
        await target.stop();
      }
    }
  }
} finally {
  await receiver?.stop();
  rmSync(work, { recursive: true, force: true });
}

const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
const total = (name: TargetName) => [...(byTarget.get(name)?.stages.values() ?? [])].reduce((a, b) => a + b, 0);
const lines = [
  `${scenario.id} on Node.js ${process.version}, ${processes} process(es) a target; perf samples per 1,000 requests (0.5 µs of CPU a request each)` +
    (Object.keys(env).length > 0 ? `; with ${flags.env.join(' ')}` : '') +
    ':',
  '',
  row(['stage', ...names]),
  row(['---', ...names.map(() => '---:')]),
];
for (const stage of [...STAGES.map(([s]) => s), REST])
  lines.push(row([stage, ...names.map((name) => (byTarget.get(name)?.stages.get(stage) ?? 0).toFixed(1))]));
lines.push(row(['all samples', ...names.map((name) => total(name).toFixed(1))]));
lines.push(row(['CPU µs a request (/proc, each process)', ...names.map((name) => (byTarget.get(name)?.cpuMicros ?? []).map((v) => v.toFixed(1)).join(', '))]));
// --detail: the frames that decided each stage, the most samples first (the rest by its leaf frame);
// then where each target differs from the first one, frame by frame, the largest differences first.
if (flags.detail) {
  const framesOf = (name: TargetName | undefined) => byTarget.get(name as TargetName)?.frames ?? new Map<string, number>();
  for (const name of names) {
    lines.push('', `${name}, the frames that decided:`, '');
    for (const [frame, samples] of [...framesOf(name)].sort((a, b) => b[1] - a[1]).slice(0, 60)) lines.push(`- ${samples.toFixed(1)} ${frame}`);
  }
  const first = framesOf(names[0]);
  for (const name of names.slice(1)) {
    const these = framesOf(name);
    const differences = [...new Set([...first.keys(), ...these.keys()])]
      .map((frame) => [frame, (these.get(frame) ?? 0) - (first.get(frame) ?? 0)] as const)
      .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
    lines.push('', `${name} over ${names[0]}, frame by frame:`, '');
    for (const [frame, samples] of differences.slice(0, 40)) lines.push(`- ${samples >= 0 ? '+' : ''}${samples.toFixed(1)} ${frame}`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
