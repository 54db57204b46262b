/**
 * The overload part (docs/performance.md, "Past capacity"), in three regimes, each beside the
 * same build with overload control off in the same run:
 *
 * - closed: closed loops, wrk's kept-alive connections sending the next request once answered and
 *   ignoring Retry-After (a worker pool, a pooled proxy): the sort at 16, 64 and 256 connections,
 *   the batch at 32, 128 and 512, S1 and S2 at 1,000; 6 s each, answers (2xx) a second counted, not requests;
 * - neighbour: a busy loop on the service's CPU (another tenant), the sort at 60 and 120 a second,
 *   with wrk2 (kept-alive connections, 20 s, its first 10 s calibrating) and with the generator below
 *   (callers on connections of their own, 12 s): refusals and latency;
 * - open: the steps below, past capacity.
 *
 *   npm run bench:overload                                   # the three parts, 2 processes each
 *   npm run bench:overload -- --parts open --targets service,service+off,service+pressure --scenarios sort --label library
 *
 * Each target process is started on CPU 1 and warmed with the bench's mixed traffic; its capacity C
 * for the scenario is measured with wrk (50 keep-alive connections, CPU 0; 2xx a second, the median
 * of three 8 s runs), in a process of its own with overload control off. Then the generator
 * (bench/vendor/overload, Go's standard library, built once with `go build`; Debian's golang-go)
 * offers 0.25, 0.5, 0.8, 1, 2 and 5 C from CPU 0: arrivals at fixed times whatever the answers
 * do, a connection per caller in flight (Go keeps two idle ones: below capacity most callers reuse
 * them), each caller closing it after a deadline of 1 s. After 5 C, 0.25 C again: the recovery.
 * Beside each step: the service's CPU time, the generator's, /readyz asked every 250 ms with
 * a 1 s deadline, and a fixed loop timed on the service's CPU after it (the machine's speed). A refusal's cost r, as a share of an answer's, comes from the CPU time of the 1 C
 * and 5 C steps; (1 - 2r)/(1 - r) and (1 - 5r)/(1 - r) are the goodput that refusals at that cost
 * allow at 2 C and 5 C. Each rate past capacity is first offered to bench/refusing, which refuses
 * everything at once: where even it times callers out, the step is marked generator-bound (the
 * machine's limit on new connections, not the service's); its CPU time a refusal at 5 C, over the
 * service's an answer, is the r below which no server that reads the refused body can go. Figures
 * go to bench/results/overload-LABEL.md.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { generateLoad, steadyLoad } from './load.js';
import { randomIntegers, seededRandom } from './scenarios.js';
import { defineVariant, startTarget, type RunningTarget, type TargetName, treeCpuMicroseconds } from './targets.js';
import { warmUp } from './warm-up.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

const { values: flags } = parseArgs({
  options: {
    targets: { type: 'string', default: 'service' },
    scenarios: { type: 'string', default: 'sort,batch' },
    processes: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '15' },
    fractions: { type: 'string', default: '0.25,0.5,0.8,1,2,5' },
    variant: { type: 'string', multiple: true, default: [] },
    label: { type: 'string', default: 'overload' },
    parts: { type: 'string', default: 'closed,neighbour,open' },
  },
});
// The comparisons the docs make: overload control off, and @fastify/under-pressure's event-loop delay in its place.
defineVariant('off:OVERLOAD_TARGET_MS=off');
defineVariant('pressure:OVERLOAD_TARGET_MS=off');
defineVariant('pressure:MAX_EVENT_LOOP_DELAY_MS=50');
for (const spec of flags.variant) defineVariant(spec);

const SERVER_PIN = ['taskset', '-c', '1'];
const LOAD_PIN = ['taskset', '-c', '0'];
const DEADLINE = '1s';
const RECOVERY_SECONDS = 10;
const WARM_UP_SECONDS = 3;
// Each rate past capacity is first offered this long to bench/refusing, which refuses every request
// at once: a check in which more than this share of callers timed out, or the refusals' median
// passed this, is the generator's limit on this machine, and the service's step at that rate
// measures the generator (history-2026-11.md, "what the generator can offer").
const GENERATOR_CHECK_SECONDS = 3;
const GENERATOR_BOUND_TIMEOUTS = 0.01;
const GENERATOR_BOUND_REFUSAL_MS = 20;
// A step whose fixed loop on the service's CPU, before it (the last step's, or the one beside C) or
// after it, is this share slower or faster than beside C ran on a machine whose speed had moved:
// its rate was another share of what the service could do then (history-2026-11.md, "two workers at 0.8 C").
const SPEED_MOVED_SHARE = 0.15;
// C is measured with overload control off: 50 connections that are answered a refusal at once
// and send again are a retry storm, not the load the service can carry.
const CAPACITY_CONNECTIONS = 50;
const CAPACITY_RUNS = 3;

interface OverloadScenario {
  readonly id: string;
  readonly title: string;
  readonly path: string;
  readonly body: string;
}

function batchBody(): string {
  const random = seededRandom(7);
  const operations = Array.from({ length: 1_000 }, (_, i) => {
    const value = Math.floor(random() * 1e9);
    return [
      { operation: 'isEven', input: value },
      { operation: 'isNumber', input: String(value) },
      { operation: 'toString', input: { n: value, s: 'é' } },
    ][i % 3];
  });
  return JSON.stringify({ operations });
}

const SCENARIOS: readonly OverloadScenario[] = [
  { id: 'sort', title: 'POST /api/sort, 10,000 random integers', path: '/api/sort', body: JSON.stringify({ input: randomIntegers(10_000) }) },
  { id: 'batch', title: 'POST /api/batch, 1,000 operations', path: '/api/batch', body: batchBody() },
];

interface Step {
  readonly fraction: number;
  readonly offered: number;
  readonly goodput: number;
  readonly ok: number;
  readonly refused: number;
  readonly refusedP50Ms: number;
  readonly timeouts: number;
  readonly errors: number;
  readonly other: number;
  readonly late: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly serviceCpuS: number;
  readonly generatorCpuS: number;
  readonly probeMaxMs: number;
  readonly probeFailures: number;
  /** The fixed loop on the service's CPU just after the step, ms (cpuLoopMs). */
  readonly cpuLoopMs?: number;
}

// A fixed busy loop, timed on the service's CPU once C is measured and after each step: this
// machine's speed has moved by half within half an hour (bench/results/history-2026-11.md), and
// a rate fixed from C is then another share of what the service can do.
const CPU_LOOP =
  'const t = process.hrtime.bigint(); let x = 0; for (let i = 0; i < 2e8; i++) x += i % 7; console.log(Number(process.hrtime.bigint() - t) / 1e6, x);';

/** How long the fixed loop takes on the service's CPU now, in milliseconds. */
async function cpuLoopMs(): Promise<number> {
  const [command, ...args] = [...SERVER_PIN, process.execPath, '-e', CPU_LOOP];
  const { stdout } = await run(command, args);
  return Math.round(Number(stdout.split(' ')[0]));
}

/** The generator, built once for each version of its source into ~/.cache/json-utility-service. */
function generator(): string {
  const source = createHash('sha256')
    .update(readFileSync(join(root, 'bench/vendor/overload/main.go')))
    .digest('hex')
    .slice(0, 12);
  const binary = join(homedir(), `.cache/json-utility-service/overload-${source}`);
  if (existsSync(binary)) return binary;
  mkdirSync(join(homedir(), '.cache/json-utility-service'), { recursive: true });
  try {
    execFileSync('go', ['build', '-o', binary, '.'], {
      cwd: join(root, 'bench/vendor/overload'),
      env: { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod' },
    });
  } catch {
    throw new Error('bench/vendor/overload did not build: it needs Go (apt-get install golang-go)');
  }
  return binary;
}

function durationMs(text: string): number {
  const match = /^([\d.]+)(ns|µs|us|ms|s)$/.exec(text);
  if (match === null) return Number.NaN;
  const scale = { ns: 1e-6, µs: 1e-3, us: 1e-3, ms: 1, s: 1000 }[match[2] as 'ns'];
  return Number(match[1]) * scale;
}

/** /readyz every 250 ms with a 1 s deadline until `stop` resolves: the slowest answer and the failures. */
async function probeWhile(base: string, stop: Promise<unknown>): Promise<{ maxMs: number; failures: number }> {
  let maxMs = 0;
  let failures = 0;
  let done = false;
  void stop.finally(() => (done = true));
  while (!done) {
    const start = performance.now();
    try {
      const response = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.status !== 200) failures++;
    } catch {
      failures++;
    }
    maxMs = Math.max(maxMs, performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { maxMs: Math.round(maxMs), failures };
}

async function offer(target: RunningTarget, scenario: OverloadScenario, bodyFile: string, fraction: number, rate: number, seconds: number): Promise<Step> {
  const cpuBefore = treeCpuMicroseconds(target.pid);
  const load = run(
    '/usr/bin/time',
    [
      '-f',
      'cpu %U %S',
      ...LOAD_PIN,
      generator(),
      '-url',
      `${target.base}${scenario.path}`,
      '-bodyfile',
      bodyFile,
      '-rate',
      String(rate),
      '-dur',
      `${seconds}s`,
      '-timeout',
      DEADLINE,
      '-conns',
      '0',
    ],
    { maxBuffer: 1 << 20 },
  );
  const [{ stdout, stderr }, probes] = await Promise.all([load, probeWhile(target.base, load)]);
  const serviceCpuS = (treeCpuMicroseconds(target.pid) - cpuBefore) / 1e6;
  const number = (name: string): number => Number(new RegExp(`${name} (\\d+)`).exec(stdout)?.[1] ?? Number.NaN);
  const cpu = /cpu ([\d.]+) ([\d.]+)/.exec(stderr);
  return {
    fraction,
    offered: rate,
    goodput: Number(/goodput (\d+)\/s/.exec(stdout)?.[1] ?? Number.NaN),
    ok: Number(/\((\d+) ok\)/.exec(stdout)?.[1] ?? Number.NaN),
    refused: number('shed'),
    refusedP50Ms: durationMs(/shed \d+ \(p50 ([^)]+)\)/.exec(stdout)?.[1] ?? ''),
    timeouts: number('timeouts'),
    errors: number('errors'),
    other: number('other'),
    late: number('late'),
    p50Ms: durationMs(/ok p50 (\S+)/.exec(stdout)?.[1] ?? ''),
    p99Ms: durationMs(/ p99 (\S+)/.exec(stdout)?.[1] ?? ''),
    serviceCpuS,
    generatorCpuS: cpu === null ? Number.NaN : Number(cpu[1]) + Number(cpu[2]),
    probeMaxMs: probes.maxMs,
    probeFailures: probes.failures,
  };
}

interface Row {
  readonly target: TargetName;
  readonly scenario: string;
  readonly process: number;
  readonly capacity: number;
  /** The fixed loop on the service's CPU once C was measured, ms. */
  readonly cpuLoopMsAtCapacity: number;
  readonly steps: Step[];
  readonly recovery: Step;
  /** A refusal's CPU time as a share of an answer's. */
  readonly r: number;
  /** The same for bare node:http's refusal (bench/refusing): no server that reads the body refuses for less. */
  readonly bareR: number;
  /** Each rate past capacity offered to bench/refusing, by fraction: what the generator alone did. */
  readonly generatorAlone: ReadonlyMap<number, Step>;
}

/** Offers each rate to bench/refusing on the service's CPU (GENERATOR_CHECK_SECONDS each). */
async function offerGeneratorAlone(
  scenario: OverloadScenario,
  bodyFile: string,
  rates: readonly { fraction: number; rate: number }[],
  workDir: string,
): Promise<Map<number, Step>> {
  const checks = new Map<number, Step>();
  if (rates.length === 0) return checks;
  const refusing = await startTarget('refusing', SERVER_PIN, workDir);
  try {
    for (const { fraction, rate } of rates) checks.set(fraction, await offer(refusing, scenario, bodyFile, fraction, rate, GENERATOR_CHECK_SECONDS));
  } finally {
    await refusing.stop();
  }
  return checks;
}

/** Whether the generator alone timed out callers or refused them late at this rate: its limit, not the service's. */
function generatorBound(check: Step | undefined): boolean {
  if (check === undefined) return false;
  return check.timeouts > GENERATOR_BOUND_TIMEOUTS * check.offered * GENERATOR_CHECK_SECONDS || check.refusedP50Ms > GENERATOR_BOUND_REFUSAL_MS;
}

/** Whether the fixed loop before the step (the step before it, or beside C) or after it was SPEED_MOVED_SHARE off the one beside C. */
function speedMoved(row: Row, before: Step | undefined, step: Step): boolean {
  const moved = (ms: number | undefined): boolean => ms !== undefined && Math.abs(ms / row.cpuLoopMsAtCapacity - 1) >= SPEED_MOVED_SHARE;
  return moved(before === undefined ? row.cpuLoopMsAtCapacity : before.cpuLoopMs) || moved(step.cpuLoopMs);
}

/**
 * r from the 1 C and 5 C steps: CPU = a·answers + b·refusals in each, solved for a and b; and the
 * floor, bare node:http's refusal (bench/refusing at 5 C: its CPU over its refusals) over the same a.
 */
function refusalShares(one: Step, five: Step, bare: Step | undefined): { r: number; bareR: number } {
  const [a1, b1, c1] = [one.ok, one.refused, one.serviceCpuS];
  const [a2, b2, c2] = [five.ok, five.refused, five.serviceCpuS];
  const determinant = a1 * b2 - a2 * b1;
  if (determinant === 0) return { r: Number.NaN, bareR: Number.NaN };
  const answer = (c1 * b2 - c2 * b1) / determinant;
  const refusal = (a1 * c2 - a2 * c1) / determinant;
  return { r: refusal / answer, bareR: bare === undefined ? Number.NaN : bare.serviceCpuS / bare.refused / answer };
}

const round = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

function report(rows: readonly Row[], command: string): string {
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
  const lines = [
    `# Overload: callers with 1 s deadlines at fixed rates (${new Date().toISOString().slice(0, 10)}, ${commit}, Node.js ${process.version})`,
    '',
    `\`${command}\`. The service on CPU 1, the load on CPU 0. C: wrk, ${CAPACITY_CONNECTIONS} keep-alive connections, 2xx a second, the median of ${CAPACITY_RUNS} runs of 8 s, overload control off. Goodput: 2xx within the deadline, a second, and as a share of C. ` +
      `CPU 1's loop: a fixed busy loop on the service's CPU once C was measured (beside C) and after each step, ms: where it moved, the machine's speed did, and the step's rate is another share of what the service could do. ` +
      `Speed moved: the loop before the step or after it ${SPEED_MOVED_SHARE * 100}% or more off the one beside C.`,
    '',
    "| target | scenario | process | C /s (CPU 1's loop ms) | offered | goodput /s | of C | refused (p50 ms) | timeouts | errors | 2xx p50 / p99 ms | probe max ms (failed) | service CPU s | generator CPU s | CPU 1's loop ms |",
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const bound = (row: Row, step: Step): boolean => step !== row.recovery && generatorBound(row.generatorAlone.get(step.fraction));
  for (const row of rows) {
    const labelled = [...row.steps.map((s) => [`${s.fraction} C`, s] as const), ['0.25 C after', row.recovery] as const];
    for (const [index, [label, step]] of labelled.entries()) {
      const marks = [...(bound(row, step) ? ['generator-bound'] : []), ...(speedMoved(row, labelled[index - 1]?.[1], step) ? ['speed moved'] : [])];
      lines.push(
        `| ${row.target} | ${row.scenario} | ${row.process} | ${round(row.capacity)} (${row.cpuLoopMsAtCapacity}) | ${label} (${[`${step.offered}/s`, ...marks].join(', ')}) | ${step.goodput} | ${round(step.goodput / row.capacity, 2)} | ` +
          `${step.refused} (${round(step.refusedP50Ms, 1)}) | ${step.timeouts} | ${step.errors + step.other} | ${round(step.p50Ms)} / ${round(step.p99Ms)} | ` +
          `${step.probeMaxMs} (${step.probeFailures}) | ${round(step.serviceCpuS, 1)} | ${round(step.generatorCpuS, 1)} | ${step.cpuLoopMs ?? '–'} |`,
      );
    }
  }
  lines.push(
    '',
    "| target | scenario | process | r | limit at 2 C (1-2r)/(1-r) | goodput at 2 C / at 1 C | limit at 5 C (1-5r)/(1-r) | goodput at 5 C / at 1 C | bare node:http's r | its limit at 5 C |",
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const row of rows) {
    const at = (fraction: number) => row.steps.find((step) => step.fraction === fraction)?.goodput ?? Number.NaN;
    lines.push(
      `| ${row.target} | ${row.scenario} | ${row.process} | ${round(row.r, 3)} | ${round((1 - 2 * row.r) / (1 - row.r), 2)} | ${round(at(2) / at(1), 2)} | ` +
        `${round((1 - 5 * row.r) / (1 - row.r), 2)} | ${round(at(5) / at(1), 2)} | ${round(row.bareR, 3)} | ${round((1 - 5 * row.bareR) / (1 - row.bareR), 2)} |`,
    );
  }
  lines.push(
    '',
    `The generator alone: each rate past capacity offered for ${GENERATOR_CHECK_SECONDS} s to bench/refusing (bare \`node:http\`, every request refused at once, on the service's CPU). ` +
      `Generator-bound: over ${GENERATOR_BOUND_TIMEOUTS * 100}% of its callers timed out or its refusals' median passed ${GENERATOR_BOUND_REFUSAL_MS} ms there: the service's step at that rate measures the generator, and r (from the 5 C step) is not given.`,
    '',
    '| target | scenario | process | offered | refused (p50 ms) | timeouts | generator CPU s |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const row of rows) {
    for (const check of row.generatorAlone.values()) {
      lines.push(
        `| ${row.target} | ${row.scenario} | ${row.process} | ${check.fraction} C (${check.offered}/s${generatorBound(check) ? ', generator-bound' : ''}) | ` +
          `${check.refused} (${round(check.refusedP50Ms, 1)}) | ${check.timeouts} | ${round(check.generatorCpuS, 1)} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * C: the target's answers a second under wrk, in a process of its own with overload control off;
 * the median of three runs, so that one run's JIT state or the machine's moment does not move what
 * 0.8 C means (one run's C has differed from the hour before's by 18%).
 */
async function measureCapacity(target: TargetName, scenario: OverloadScenario, bodyFile: string, workDir: string): Promise<number> {
  const running = await startTarget(target, SERVER_PIN, workDir, { OVERLOAD_TARGET_MS: 'off' });
  try {
    await warmUp(running.base, { passes: 5, loads: 1, generator: 'wrk', pin: LOAD_PIN, workDir, connections: 50 });
    const load = { url: `${running.base}${scenario.path}`, method: 'POST' as const, bodyFile, connections: CAPACITY_CONNECTIONS, seconds: 8 };
    const runs: number[] = [];
    for (let i = 0; i < CAPACITY_RUNS; i++) {
      const saturated = await generateLoad('wrk', load, LOAD_PIN, workDir);
      runs.push(saturated.requestsPerSecond * (1 - saturated.non2xx / saturated.requests));
    }
    return runs.sort((a, b) => a - b)[Math.floor(CAPACITY_RUNS / 2)] ?? Number.NaN;
  } finally {
    await running.stop();
  }
}

const CONTROL_TARGETS: readonly TargetName[] = ['service', 'service+off'];
const CLOSED_LOOPS = [
  { scenario: 'sort', connections: [16, 64, 256] },
  { scenario: 'batch', connections: [32, 128, 512] },
  { scenario: 'S1', connections: [1_000] },
  { scenario: 'S2', connections: [1_000] },
] as const;
const CLOSED_LOOP_SECONDS = 6;
// The bench's S1 (POST /api/isEven {"input":12345}) and S2 (GET /api/isOdd/12345), the smallest requests.
const SMALL = { S1: { path: '/api/isEven', body: '{"input":12345}' }, S2: { path: '/api/isOdd/12345', body: undefined } } as const;
const NEIGHBOUR_RATES = [60, 120];
const NEIGHBOUR_SECONDS = { wrk2: 20, generator: 12 };

interface ClosedLoop {
  readonly target: TargetName;
  readonly process: number;
  readonly scenario: string;
  readonly connections: number;
  readonly answered: number;
  readonly refused: number;
}

/** The two targets in this process's order: alternating, so that neither always runs first. */
const inTurn = (process: number): readonly TargetName[] => (process % 2 === 1 ? CONTROL_TARGETS : [...CONTROL_TARGETS].reverse());

/** The closed loops (CLOSED_LOOPS) against the service and the service with control off, `processes` of each. */
async function closedLoops(processes: number, bodyFiles: Record<string, string>, workDir: string): Promise<ClosedLoop[]> {
  const rows: ClosedLoop[] = [];
  for (let process = 1; process <= processes; process++) {
    for (const target of inTurn(process)) {
      const running = await startTarget(target, SERVER_PIN, workDir);
      try {
        await warmUp(running.base, { passes: 5, loads: 1, generator: 'wrk', pin: LOAD_PIN, workDir, connections: 50 });
        for (const { scenario, connections } of CLOSED_LOOPS) {
          for (const count of connections) {
            const path = scenario === 'S1' || scenario === 'S2' ? SMALL[scenario].path : SCENARIOS.find((each) => each.id === scenario)?.path;
            const post = scenario !== 'S2';
            const load = {
              url: `${running.base}${path}`,
              method: post ? ('POST' as const) : ('GET' as const),
              bodyFile: bodyFiles[scenario],
              connections: count,
              seconds: CLOSED_LOOP_SECONDS,
            };
            const result = await generateLoad('wrk', load, LOAD_PIN, workDir);
            const answered = ((result.requests - result.non2xx) / result.requests) * result.requestsPerSecond;
            rows.push({ target, process, scenario, connections: count, answered, refused: result.non2xx });
            console.log(`closed loop ${target} process ${process}: ${scenario} at ${count}: ${Math.round(answered)}/s answered, ${result.non2xx} not 2xx`);
          }
        }
      } finally {
        await running.stop();
      }
    }
  }
  return rows;
}

interface NeighbourRun {
  readonly target: TargetName;
  readonly process: number;
  readonly rate: number;
  readonly generator: 'wrk2' | 'callers';
  readonly requests: number;
  readonly refused: number;
  readonly timeouts: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** The sort at NEIGHBOUR_RATES beside a busy loop on the service's CPU, with wrk2 and with the generator. */
async function neighbours(processes: number, scenario: OverloadScenario, bodyFile: string, workDir: string): Promise<NeighbourRun[]> {
  const rows: NeighbourRun[] = [];
  for (let process = 1; process <= processes; process++) {
    for (const target of inTurn(process)) {
      const running = await startTarget(target, SERVER_PIN, workDir);
      const [command, ...args] = [...SERVER_PIN, globalThis.process.execPath, '-e', 'for (;;);'];
      const neighbour = execFile(command, args);
      try {
        await warmUp(running.base, { passes: 5, loads: 1, generator: 'wrk', pin: LOAD_PIN, workDir, connections: 50 });
        for (const rate of NEIGHBOUR_RATES) {
          const load = { url: `${running.base}${scenario.path}`, method: 'POST' as const, bodyFile, connections: 16, seconds: NEIGHBOUR_SECONDS.wrk2 };
          const steady = await steadyLoad(load, rate, LOAD_PIN, workDir);
          rows.push({
            target,
            process,
            rate,
            generator: 'wrk2',
            requests: steady.requests,
            refused: steady.non2xx,
            timeouts: steady.errors,
            p50Ms: steady.p50Ms,
            p99Ms: steady.p99Ms,
          });
          const callers = await offer(running, scenario, bodyFile, 0, rate, NEIGHBOUR_SECONDS.generator);
          rows.push({
            target,
            process,
            rate,
            generator: 'callers',
            requests: callers.ok + callers.refused + callers.timeouts + callers.late + callers.errors + callers.other,
            refused: callers.refused,
            timeouts: callers.timeouts,
            p50Ms: callers.p50Ms,
            p99Ms: callers.p99Ms,
          });
          console.log(`neighbour ${target} process ${process}: ${rate}/s`, JSON.stringify(rows.slice(-2)));
        }
      } finally {
        neighbour.kill();
        await running.stop();
      }
    }
  }
  return rows;
}

/** The middle value, or the mean of the two middle ones. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return sorted.length === 0
    ? Number.NaN
    : sorted.length % 2 === 1
      ? (sorted[Math.floor(middle)] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function closedLoopReport(rows: readonly ClosedLoop[]): string[] {
  const lines = [
    '## Closed loops',
    '',
    `wrk -t1, kept-alive connections, ${CLOSED_LOOP_SECONDS} s each; answered: 2xx a second (median over processes, each process's figure in brackets); refused: every answer not 2xx, summed.`,
    '',
    '| scenario | connections | service: answered /s | refused | control off: answered /s | refused | service / off |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const { scenario, connections } of CLOSED_LOOPS) {
    for (const count of connections) {
      const of = (target: TargetName) => rows.filter((row) => row.target === target && row.scenario === scenario && row.connections === count);
      const [service, off] = [of('service'), of('service+off')];
      const figures = (list: readonly ClosedLoop[]) =>
        `${round(median(list.map((row) => row.answered)))} (${list.map((row) => round(row.answered)).join(', ')})`;
      const refused = (list: readonly ClosedLoop[]) => list.reduce((sum, row) => sum + row.refused, 0);
      lines.push(
        `| ${scenario} | ${count} | ${figures(service)} | ${refused(service)} | ${figures(off)} | ${refused(off)} | ${round(median(service.map((row) => row.answered)) / median(off.map((row) => row.answered)), 2)} |`,
      );
    }
  }
  return lines;
}

function neighbourReport(rows: readonly NeighbourRun[]): string[] {
  const lines = [
    '## Neighbour',
    '',
    `A busy loop (\`node -e 'for (;;);'\`) on the service's CPU; the sort at fixed rates from CPU 0: wrk2 (16 kept-alive connections, ${NEIGHBOUR_SECONDS.wrk2} s, latency from each request's intended start, its first 10 s calibrating) and the generator (callers on connections of their own, 1 s deadline, ${NEIGHBOUR_SECONDS.generator} s).`,
    '',
    '| target | process | rate /s | load | requests | refused | timeouts | p50 / p99 ms |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.target} | ${row.process} | ${row.rate} | ${row.generator} | ${row.requests} | ${row.refused} | ${row.timeouts} | ${round(row.p50Ms)} / ${round(row.p99Ms)} |`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'overload-bench-'));
  const seconds = Number(flags.seconds);
  const fractions = flags.fractions.split(',').map(Number);
  const scenarios = SCENARIOS.filter((scenario) => flags.scenarios.split(',').includes(scenario.id));
  const parts = flags.parts.split(',');
  const bodyFiles: Record<string, string> = {};
  for (const scenario of SCENARIOS) writeFileSync((bodyFiles[scenario.id] = join(workDir, `${scenario.id}.json`)), scenario.body);
  writeFileSync((bodyFiles.S1 = join(workDir, 'S1.json')), SMALL.S1.body);
  const closed = parts.includes('closed') ? await closedLoops(Number(flags.processes), bodyFiles, workDir) : [];
  const sort = SCENARIOS[0] as OverloadScenario;
  const neighbour = parts.includes('neighbour') ? await neighbours(Number(flags.processes), sort, bodyFiles.sort as string, workDir) : [];
  const rows: Row[] = [];
  for (let process = 1; process <= Number(flags.processes) && parts.includes('open'); process++) {
    for (const target of flags.targets.split(',') as TargetName[]) {
      for (const scenario of scenarios) {
        const bodyFile = join(workDir, `${scenario.id}.json`);
        writeFileSync(bodyFile, scenario.body);
        const capacity = await measureCapacity(target, scenario, bodyFile, workDir);
        const cpuLoopMsAtCapacity = await cpuLoopMs();
        const pastCapacity = fractions.filter((fraction) => fraction > 1).map((fraction) => ({ fraction, rate: Math.round(fraction * capacity) }));
        const generatorAlone = await offerGeneratorAlone(scenario, bodyFile, pastCapacity, workDir);
        for (const check of generatorAlone.values()) {
          if (generatorBound(check))
            console.log(
              `the generator alone at ${check.fraction} C (${check.offered}/s): ${check.timeouts} timeouts, refusals' p50 ${round(check.refusedP50Ms, 1)} ms: generator-bound`,
            );
        }
        const running = await startTarget(target, SERVER_PIN, workDir);
        try {
          await warmUp(running.base, { passes: 5, loads: 1, generator: 'wrk', pin: LOAD_PIN, workDir, connections: 50 });
          // The warm-up's connections are kept open: a first second of callers that each open one,
          // discarded, so that the first step finds the process as a later one does.
          await offer(running, scenario, bodyFile, 0.25, Math.round(0.25 * capacity), WARM_UP_SECONDS);
          const steps: Step[] = [];
          for (const fraction of fractions) {
            const step = { ...(await offer(running, scenario, bodyFile, fraction, Math.round(fraction * capacity), seconds)), cpuLoopMs: await cpuLoopMs() };
            steps.push(step);
            console.log(`${target} ${scenario.id} process ${process}: ${fraction} C`, JSON.stringify(step));
          }
          const recovery = { ...(await offer(running, scenario, bodyFile, 0.25, Math.round(0.25 * capacity), RECOVERY_SECONDS)), cpuLoopMs: await cpuLoopMs() };
          const one = steps.find((step) => step.fraction === 1);
          const five = steps.find((step) => step.fraction === 5);
          const bare = generatorAlone.get(5);
          const { r, bareR } =
            one !== undefined && five !== undefined && !generatorBound(bare) ? refusalShares(one, five, bare) : { r: Number.NaN, bareR: Number.NaN };
          rows.push({ target, scenario: scenario.id, process, capacity, cpuLoopMsAtCapacity, steps, recovery, r, bareR, generatorAlone });
        } finally {
          await running.stop();
        }
      }
    }
  }
  const command = `npm run bench:overload -- ${process.argv.slice(2).join(' ')}`.trim();
  const file = join(root, 'bench/results', `overload-${flags.label}.md`);
  const sections = [...(closed.length > 0 ? closedLoopReport(closed) : []), '', ...(neighbour.length > 0 ? neighbourReport(neighbour) : []), ''];
  writeFileSync(file, `${rows.length > 0 ? report(rows, command) : `# Overload (${command})\n`}\n${sections.join('\n')}`);
  console.log(`written: ${file}`);
}

await main();
