/**
 * `npm run bench`: the service side by side with bare node:http (alone and with the service's
 * per-request features), bare Fastify (with and without its logger) and Express 5, in one run, under the same load generator (wrk when installed, else autocannon).
 * Writes bench/results/<label>.json and .md (the label is the Node.js line by default: node26). A benchmark, not a test: it never fails on timing.
 *
 *   npm run bench                      # 3 processes per target, 1 round of 5 s each per scenario; sort scaling, batches, the client's batching, peak RSS
 *   npm run bench -- --processes 5 --rounds 2 --seconds 5 --label after
 *   npm run bench -- --scenarios S1,S2 --parts throughput --label try   # a quicker look at some of it
 *   npm run bench -- --targets baseline,node-features --env FEATURES=id --parts throughput --label id   # one feature's cost
 *   npm run bench -- --smoke --out /tmp/bench   # seconds-long run that only proves the script works
 *   npm run bench -- --targets service,service-unsampled,service-traced --scenarios S1 --parts throughput --label traced   # tracing's cost
 *   npm run bench -- --targets service,service-traced --collector http://127.0.0.1:9 --parts throughput --label down   # a collector that is down
 *   npm run bench -- --before /tmp/previous --targets service,service-traced,service-traced-before --scenarios S1 --parts throughput --label traced-ab
 *   npm run bench -- --before /tmp/previous --targets service,service-before,fastify --scenarios S1,S2,S3,S4 --rounds 2 --parts throughput --label ab
 *   npm run bench -- --targets service,service-traced,service-traced+b64 --variant b64:OTEL_BSP_MAX_EXPORT_BATCH_SIZE=64 --scenarios S1 --parts throughput,steady
 *                                                                  # the tracing SDK's settings compared in one run (variants: bench/targets.ts)
 *   npm run bench -- --targets service,service-traced,fastify --parts steady --label steady   # S1 at 25% and 50% of the service's
 *                                               # capacity, at a fixed arrival rate (wrk2, bench/vendor), with the loop's delay and GC inside
 *                                               # an A/B against another checkout, built there first
 *
 * Before any measurement every target gets the same mixed traffic (bench/warm-up.ts): the mixed
 * requests one at a time, then every scenario under load (`--warmup-loads` passes). A process that
 * has seen only one kind of request runs in a state production never sees, and measures faster;
 * one that has seen a few hundred requests is still settling. With the throughput part, the
 * `--fresh` scenarios (S1 and S2) are measured first in each process as it starts, after their
 * own load alone: the report's drift table is the same process's CPU a request after the mixed
 * warm-up over that. Each
 * target runs in several processes (`--processes`), one set after another, and the report gives a
 * ratio's median and spread over them: one process's JIT state can move a figure by a third.
 */
import { execFileSync } from 'node:child_process';
import { cpus, tmpdir } from 'node:os';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateLoad, installed, steadyLoad, type LoadGenerator, type LoadResult } from './load.js';
import { call, loadOf, mixedRequests, warmUp, WARM_UP_PASSES } from './warm-up.js';
import { headline, markdownReport, type BenchReport, type Cell, type RssCase, type ScalingRow, type SteadyCell } from './report.js';
import { manyOperations } from './many.js';
import { clientBatching } from './client-batching.js';
import { nestedDocument, scenarios, seededRandom, type Scenario } from './scenarios.js';
import {
  cpuMicroseconds,
  defineVariant,
  memoryMiB,
  startReceiver,
  startTarget,
  targetOf,
  variantSettings,
  type BaseTargetName,
  type RunningTarget,
  type TargetName,
} from './targets.js';

const root = new URL('..', import.meta.url).pathname;
const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    'warmup-loads': { type: 'string', default: '3' },
    rounds: { type: 'string', default: '1' },
    processes: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    sizes: { type: 'string', default: '1000,10000,100000,1000000' },
    load: { type: 'string' },
    label: { type: 'string', default: `node${process.versions.node.split('.')[0]}` },
    out: { type: 'string', default: join(root, 'bench/results') },
    scenarios: { type: 'string', default: 'S1,S2,S3,S4,S5,S6' },
    // Measured in each fresh process too, before the mixed warm-up (the drift table); 'none' for none.
    fresh: { type: 'string', default: 'S1,S2' },
    parts: { type: 'string', default: 'throughput,scaling,many,client,rss' },
    'stream-lines': { type: 'string', default: '1000000' },
    smoke: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    before: { type: 'string' },
    targets: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
    // LABEL:NAME=VALUE, a setting of the variant LABEL: target BASE+LABEL is BASE with its settings (bench/targets.ts).
    variant: { type: 'string', multiple: true, default: [] },
    collector: { type: 'string' },
    rates: { type: 'string', default: '0.25,0.5' },
    'steady-seconds': { type: 'string', default: '25' },
  },
});
const smoke = flags.smoke;
const settings = {
  seconds: smoke ? 1 : Number(flags.seconds),
  // The smoke run only proves that every target answers every scenario: two requests a connection do.
  requestsPerConnection: smoke ? 2 : undefined,
  warmupSeconds: smoke ? 0 : Number(flags.warmup),
  // Passes of every scenario under load, one second each, in the mixed warm-up (the smoke run makes one, of two requests a connection).
  warmupLoads: smoke ? 1 : wholeNumber('--warmup-loads', flags['warmup-loads']),
  rounds: smoke ? 1 : Number(flags.rounds),
  // Each target is started this many times, one set after another: one process's JIT state can move a figure by a third.
  processes: smoke ? 1 : Number(flags.processes),
  connections: Number(flags.connections),
  sizes: smoke ? [1000] : flags.sizes.split(',').map(Number),
  // The peak-RSS bodies fill BODY_LIMIT; the smoke run lowers it so that it stays quick.
  bodyLimit: smoke ? 256 * 1024 : 16 * 1024 * 1024,
  sortMaxLength: 1_000_000,
};
const parts = new Set(flags.parts.split(','));
const chosenScenarios = new Set(flags.scenarios.split(','));
const freshIds = flags.fresh === 'none' ? [] : flags.fresh.split(',');
for (const id of freshIds) if (!scenarios().some((s) => s.id === id)) throw new RangeError(`--fresh names scenarios (S1,S2 by default) or none, not ${id}`);
// Of the scenarios chosen, those measured fresh too.
const freshScenarios = scenarios().filter((s) => freshIds.includes(s.id) && chosenScenarios.has(s.id));
// wrk cannot stop after a number of requests: the smoke run's loads go to autocannon.
const generator: LoadGenerator = (flags.load as LoadGenerator | undefined) ?? (installed('wrk') && !smoke ? 'wrk' : 'autocannon');
if (flags.before !== undefined) process.env.BENCH_BEFORE = flags.before;
// The traced targets export to this URL instead of the bench's receiver: a collector that is down or never answers.
if (flags.collector !== undefined) process.env.BENCH_COLLECTOR = new URL(flags.collector).href.replace(/\/$/, '');
const ALL_TARGETS: readonly BaseTargetName[] = [
  'service',
  'service-before',
  'service-logged',
  'service-traced',
  'service-traced-before',
  'service-unsampled',
  'baseline',
  'node-features',
  'fastify',
  'fastify-logger',
  'express',
];
for (const spec of flags.variant) defineVariant(spec);
const TARGET_ORDER: readonly TargetName[] =
  flags.targets === undefined
    ? ALL_TARGETS.filter((name) => !name.endsWith('-before') || flags.before !== undefined)
    : flags.targets.split(',').map(knownTarget);
// NAME=VALUE settings given to every target (each reads only its own): one run per variant, such as FEATURES=id or ACCESS_LOG=errors.
const extraEnv: Record<string, string> = Object.fromEntries(
  flags.env.map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env takes NAME=VALUE, not ${JSON.stringify(pair)}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);
// The smoke run checks answers, not overload control: its S4 opens 4 connections together on a cold process, each sending two 2 MiB sorts to one pool thread, a burst of new callers whose waits the control may refuse (docs/operations.md, "Past capacity", rule 3).
if (flags.smoke) extraEnv.OVERLOAD_TARGET_MS ??= 'off';

function wholeNumber(flag: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`${flag} takes a whole number, not ${JSON.stringify(text)}`);
  return Number(text);
}

function knownTarget(name: string): TargetName {
  targetOf(name); // names an unknown target, or a variant's label given no settings
  return name as TargetName;
}
// Sort scaling compares the implementations, not their logging: the first four only.
const SCALING_TARGETS: ReadonlySet<TargetName> = new Set(['service', 'baseline', 'fastify', 'express']);

// Server on CPU 0, load generator (and this script) on CPU 1, where taskset and two CPUs exist.
const canPin = installed('taskset') && cpus().length >= 2;
const serverPin = canPin ? ['taskset', '-c', '0'] : [];
const loadPin = canPin ? ['taskset', '-c', '1'] : [];
if (canPin) execFileSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' });

const workDir = mkdtempSync(join(tmpdir(), 'json-utility-bench-'));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The mixed warm-up (warm-up.ts) of every target, before anything is measured. */
async function warmUpAll(targets: Map<TargetName, RunningTarget>): Promise<void> {
  const passes = smoke ? 1 : WARM_UP_PASSES;
  for (const target of targets.values())
    await warmUp(target.base, {
      passes,
      loads: settings.warmupLoads,
      generator,
      pin: loadPin,
      workDir,
      connections: settings.connections,
      ...(settings.requestsPerConnection === undefined ? {} : { requestsPerConnection: settings.requestsPerConnection }),
    });
  log(`warmed up: ${mixedRequests().length} kinds of request, ${passes} times, then every scenario under load ${settings.warmupLoads} times, to each target`);
}

async function throughput(targets: Map<TargetName, RunningTarget>, all: readonly Scenario[], process: number, phase = 'mixed'): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const scenario of all) {
    for (const target of targets.values()) {
      const { status, answer } = await call(target.base, scenario);
      if (status !== 200 || !scenario.check(answer))
        throw new Error(`${target.name} answers ${scenario.id} wrongly: ${status} ${JSON.stringify(answer).slice(0, 200)}`);
    }
    for (let round = 1; round <= settings.rounds; round++) {
      // Alternate the order each round and process, so that drift of the machine shows instead of favouring one target.
      const order = (round + process) % 2 === 0 ? TARGET_ORDER : [...TARGET_ORDER].reverse();
      for (const name of order) {
        const target = targets.get(name) as RunningTarget;
        const load = loadOf(target.base, scenario, workDir, settings.connections, settings.requestsPerConnection);
        if (settings.warmupSeconds > 0) await generateLoad(generator, { ...load, seconds: settings.warmupSeconds }, loadPin, workDir);
        // The service's event-loop delay (prom-client's, reset at each scrape): read before the load, so that the figure after is the load's.
        const measuresLoop = name.startsWith('service');
        if (measuresLoop) await eventLoopDelayMaxMs(target.base);
        const cpuBefore = cpuMicroseconds(target.pid);
        const result: LoadResult = await generateLoad(generator, { ...load, seconds: settings.seconds }, loadPin, workDir);
        const loopDelayMaxMs = measuresLoop ? await eventLoopDelayMaxMs(target.base) : undefined;
        // The server's own CPU time over the requests it answered: a figure the machine's drift moves far less than req/s.
        const cpuMicrosPerRequest = (cpuMicroseconds(target.pid) - cpuBefore) / result.requests;
        const peakRssMiB = memoryMiB(target.pid, 'VmHWM');
        log(
          `${scenario.id}${phase === 'fresh' ? ' fresh' : ''} process ${process} round ${round} ${name.padEnd(8)} ${Math.round(result.requestsPerSecond)} req/s, ${cpuMicrosPerRequest.toFixed(1)} µs CPU/request, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, peak RSS ${peakRssMiB} MiB` +
            (loopDelayMaxMs === undefined ? '' : `, event-loop delay at most ${loopDelayMaxMs.toFixed(1)} ms`),
        );
        cells.push({
          scenario: scenario.id,
          target: name,
          round,
          process,
          ...result,
          cpuMicrosPerRequest,
          peakRssMiB,
          ...(loopDelayMaxMs === undefined ? {} : { loopDelayMaxMs }),
        });
      }
    }
  }
  return cells;
}

// The steady-rate part's probe, loaded into every target when that part runs (bench/steady-probe.mjs).
const PROBE = ['--import', join(root, 'bench/steady-probe.mjs')];
const probeFile = (name: TargetName, process: number) => join(workDir, `${name}-${process}.probe.json`);

/** What the probe in a target wrote for the window between two SIGUSR2s around `measure`. */
async function probed<T>(target: RunningTarget, file: string, measure: () => Promise<T>): Promise<[T, Record<string, number>]> {
  rmSync(file, { force: true });
  process.kill(target.pid, 'SIGUSR2');
  const result = await measure();
  process.kill(target.pid, 'SIGUSR2');
  const deadline = Date.now() + 5_000;
  while (!existsSync(file) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return [result, JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>];
}

/**
 * The steady-rate part: S1 at fixed arrival rates, fractions (`--rates`) of the untraced service's
 * capacity as this set of processes measures it (requests per CPU-second under wrk's saturating
 * load), sent by wrk2 to each target in turn, its latency from each request's intended send time;
 * beside it, from inside each target, the event loop's longest delay, GC pauses and bytes allocated.
 */
async function steady(targets: Map<TargetName, RunningTarget>, process: number): Promise<SteadyCell[]> {
  const scenario = scenarios().find((s) => s.id === 'S1') as Scenario;
  const service = targets.get('service');
  if (service === undefined) throw new Error('the steady part needs the service among --targets: its capacity sets the rates');
  const saturating = loadOf(service.base, scenario, workDir, settings.connections);
  const cpuBefore = cpuMicroseconds(service.pid);
  const capacityLoad = await generateLoad('wrk', { ...saturating, seconds: settings.seconds }, loadPin, workDir);
  const capacity = 1e6 / ((cpuMicroseconds(service.pid) - cpuBefore) / capacityLoad.requests);
  log(`steady: the service's capacity in this set ${Math.round(capacity)} requests per CPU-second`);
  const cells: SteadyCell[] = [];
  for (const fraction of flags.rates.split(',').map(Number)) {
    const rate = Math.round(capacity * fraction);
    const order = process % 2 === 1 ? TARGET_ORDER : [...TARGET_ORDER].reverse();
    for (const name of order) {
      const target = targets.get(name) as RunningTarget;
      const load = { ...loadOf(target.base, scenario, workDir, settings.connections), seconds: Number(flags['steady-seconds']) };
      const cpu = cpuMicroseconds(target.pid);
      const [result, inside] = await probed(target, probeFile(name, process), () => steadyLoad(load, rate, loadPin, workDir));
      const cpuMicrosPerRequest = (cpuMicroseconds(target.pid) - cpu) / result.requests;
      const cell: SteadyCell = {
        target: name,
        process,
        fraction,
        capacity,
        ...result,
        cpuMicrosPerRequest,
        loopDelayMaxMs: inside.loopDelayMaxMs ?? NaN,
        loopDelayP99Ms: inside.loopDelayP99Ms ?? NaN,
        gcPauseMsPerSecond: inside.gcPauseMsPerSecond ?? NaN,
        gcLongestPauseMs: inside.gcLongestPauseMs ?? NaN,
        allocatedBytesPerRequest: (inside.allocatedBytes ?? NaN) / result.requests,
      };
      cells.push(cell);
      log(
        `steady ${Math.round(fraction * 100)}% (${rate}/s) process ${process} ${name.padEnd(8)} p50 ${cell.p50Ms} p99 ${cell.p99Ms} p99.9 ${cell.p999Ms} max ${cell.maxMs} ms; ` +
          `${cpuMicrosPerRequest.toFixed(1)} µs CPU/request; loop delay ≤ ${cell.loopDelayMaxMs.toFixed(1)} ms; GC ${cell.gcPauseMsPerSecond.toFixed(1)} ms/s, ` +
          `longest ${cell.gcLongestPauseMs.toFixed(1)} ms; ${Math.round(cell.allocatedBytesPerRequest)} B allocated/request`,
      );
    }
  }
  return cells;
}

/** The longest event-loop delay since the last scrape of the service's /metrics, in ms. */
async function eventLoopDelayMaxMs(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { connection: 'close' } })).text();
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}

function sortBody(kind: 'numbers' | 'strings', count: number): string {
  const random = seededRandom(count);
  // Numbers with a few decimals and 8-letter strings, so that a million of either fits the default 16 MiB body limit.
  const values =
    kind === 'numbers'
      ? Array.from({ length: count }, () => Math.round((random() - 0.5) * 1e9) / 1e3)
      : Array.from({ length: count }, () =>
          Math.floor(random() * 36 ** 8)
            .toString(36)
            .padStart(8, '0'),
        );
  return JSON.stringify({ input: values });
}

async function scaling(targets: Map<TargetName, RunningTarget>): Promise<ScalingRow[]> {
  const rows: ScalingRow[] = [];
  for (const kind of ['numbers', 'strings'] as const) {
    for (const size of settings.sizes) {
      const body = sortBody(kind, size);
      const requests = Math.max(3, Math.min(100, Math.round(2e6 / size)));
      for (const target of targets.values()) {
        if (!SCALING_TARGETS.has(target.name)) continue;
        const first = await call(target.base, { method: 'POST', path: '/api/sort', body });
        const sorted = (first.answer as { sortedArray?: unknown[] }).sortedArray;
        if (first.status !== 200 || sorted?.length !== size) throw new Error(`${target.name} failed to sort ${size} ${kind}: ${first.status}`);
        const times: number[] = [];
        for (let i = 0; i < requests; i++) times.push((await call(target.base, { method: 'POST', path: '/api/sort', body })).ms);
        times.sort((a, b) => a - b);
        const ms = times[Math.floor(times.length / 2)] as number;
        rows.push({ kind, size, target: target.name, requests, bodyBytes: Buffer.byteLength(body), medianMs: ms, nsPerElement: (ms * 1e6) / size });
        log(`sort ${size} ${kind} ${target.name.padEnd(8)} ${ms.toFixed(2)} ms`);
      }
    }
  }
  return rows;
}

/** Bodies as large as BODY_LIMIT allows, each sent to a fresh service; its peak RSS (VmHWM) is read after. */
async function peakRss(): Promise<RssCase[]> {
  const limit = settings.bodyLimit;
  const count = Math.min(settings.sortMaxLength, Math.floor((limit - 64) / 16));
  const random = seededRandom(9);
  // Every element as long as the limit allows: 15-digit integers (16 bytes with the comma), 13-letter strings.
  const width = Math.min(15, Math.floor((limit - 64) / count) - 1);
  const numbers = Array.from({ length: count }, () => 10 ** (width - 1) + Math.floor(random() * 9 * 10 ** (width - 1)));
  const strings = Array.from({ length: count }, () =>
    Math.floor(random() * 36 ** 8)
      .toString(36)
      .padStart(width - 2, 'x'),
  );
  const cases = [
    { name: `sort: ${count.toLocaleString('en')} numbers`, path: '/api/sort', body: JSON.stringify({ input: numbers }) },
    { name: `sort: ${count.toLocaleString('en')} strings`, path: '/api/sort', body: JSON.stringify({ input: strings }) },
    { name: 'toString: nested object', path: '/api/toString', body: JSON.stringify({ input: nestedDocument(limit - 1024) }) },
    {
      name: 'stringSplit: ASCII text by ""',
      path: '/api/stringSplit',
      body: JSON.stringify({ input: { string: 'abcdefgh'.repeat(Math.floor((limit - 64) / 8)), seperator: '' } }),
    },
  ];
  const env = { BODY_LIMIT: String(limit), SORT_MAX_LENGTH: String(settings.sortMaxLength) };
  const results: RssCase[] = [];
  for (const { name, path, body } of cases) {
    if (Buffer.byteLength(body) > limit) throw new Error(`${name}: body of ${body.length} bytes is over the limit`);
    const service = await startTarget('service', serverPin, workDir, env);
    const idleMiB = memoryMiB(service.pid, 'VmRSS');
    const { status, ms } = await call(service.base, { method: 'POST', path, body });
    results.push({ name, bodyBytes: Buffer.byteLength(body), status, ms, idleMiB, peakMiB: memoryMiB(service.pid, 'VmHWM') });
    log(`peak RSS ${name}: ${status}, ${results.at(-1)?.peakMiB} MiB`);
    await service.stop();
  }
  return results;
}

/** Lines of the service's log that record a request (the file can be larger than a string may be). */
async function countRequestLogLines(file: string): Promise<number> {
  let count = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line.includes('"msg":"request"')) count++;
  }
  return count;
}

async function main(): Promise<void> {
  if (!flags['no-build']) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const startedAt = new Date();
  const targets = new Map<TargetName, RunningTarget>();
  // The traced targets' collector: one for the run, on the load generator's CPU.
  const receiver = flags.collector === undefined && TARGET_ORDER.some((name) => targetOf(name).traced) ? await startReceiver(loadPin, workDir) : undefined;
  try {
    const cells: Cell[] = [];
    const freshCells: Cell[] = [];
    const steadyCells: SteadyCell[] = [];
    let scalingRows: ScalingRow[] = [];
    let manyRows: Awaited<ReturnType<typeof manyOperations>> = [];
    let clientRows: Awaited<ReturnType<typeof clientBatching>> = [];
    let serviceLogLines = 0;
    for (let process = 1; process <= settings.processes; process++) {
      for (const name of TARGET_ORDER)
        targets.set(
          name,
          parts.has('steady')
            ? await startTarget(name, serverPin, workDir, { ...extraEnv, BENCH_PROBE_FILE: probeFile(name, process) }, PROBE)
            : await startTarget(name, serverPin, workDir, extraEnv),
        );
      log(`process set ${process} of ${settings.processes}; load generator: ${generator}; pinning: ${canPin ? 'servers on CPU 0, load on CPU 1' : 'none'}`);
      if (parts.has('throughput') && freshScenarios.length > 0) freshCells.push(...(await throughput(targets, freshScenarios, process, 'fresh')));
      await warmUpAll(targets);
      if (parts.has('throughput'))
        cells.push(
          ...(await throughput(
            targets,
            scenarios().filter((s) => chosenScenarios.has(s.id)),
            process,
          )),
        );
      if (parts.has('steady')) steadyCells.push(...(await steady(targets, process)));
      // The parts that measure one target each run in the first set of processes only.
      const service = targets.get('service');
      if (process === 1) {
        scalingRows = parts.has('scaling') ? await scaling(targets) : [];
        manyRows =
          parts.has('many') && service !== undefined
            ? await manyOperations(
                service,
                {
                  rounds: settings.rounds,
                  seconds: settings.seconds,
                  connections: settings.connections,
                  streamLines: smoke ? 10_000 : Number(flags['stream-lines']),
                  generator,
                  loadPin,
                  workDir,
                  ...(settings.requestsPerConnection === undefined ? {} : { requestsPerConnection: settings.requestsPerConnection }),
                },
                log,
              )
            : [];
        clientRows =
          parts.has('client') && service !== undefined
            ? await clientBatching(service, { rounds: Math.max(2, settings.rounds), connections: settings.connections, smoke }, log)
            : [];
      }
      const logged = targets.get('service-logged');
      for (const target of targets.values()) await target.stop();
      targets.clear();
      // Counted once the service has exited: its log is buffered (LOG_FLUSH_MS) and complete only then.
      serviceLogLines += logged === undefined ? 0 : await countRequestLogLines(logged.logFile);
    }
    const rss = parts.has('rss') ? await peakRss() : [];

    const report: BenchReport = {
      label: flags.label,
      commit: commitMeasured(),
      command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
      startedAt: startedAt.toISOString(),
      minutes: Math.round((Date.now() - startedAt.getTime()) / 6000) / 10,
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${process.platform} ${process.arch}` },
      loadGenerator:
        generator === 'wrk'
          ? execFileSync('sh', ['-c', 'wrk -v 2>&1 | head -1'], { encoding: 'utf8' }).trim()
          : `autocannon ${(JSON.parse(readFileSync(join(root, 'node_modules/autocannon/package.json'), 'utf8')) as { version: string }).version}`,
      pinning: canPin ? 'servers on CPU 0, load generator on CPU 1 (taskset)' : 'none',
      settings: { ...settings, smoke, env: extraEnv, variants: variantSettings() },
      serviceLogLines,
      cells,
      fresh: freshCells,
      scaling: scalingRows,
      peakRss: rss,
      many: manyRows,
      client: clientRows,
      steady: steadyCells,
    };
    mkdirSync(flags.out, { recursive: true });
    writeFileSync(join(flags.out, `${flags.label}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(flags.out, `${flags.label}.md`), markdownReport(report));
    process.stdout.write(markdownReport(report));
    // A plain `npm run bench`, every part at its defaults, is the one that writes the docs' headline.
    if (process.argv.length === 2) writeHeadline(headline(report, scenarios()));
  } finally {
    for (const target of targets.values()) await target.stop();
    await receiver?.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The commit measured, `-dirty` when the tree had changes (other than results), as `git` names it. */
function commitMeasured(): string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  try {
    const changed = git('status', '--porcelain', '--', '.', ':!bench/results', ':!docs/performance.md') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${changed ? '-dirty' : ''}`;
  } catch {
    return 'no git checkout';
  }
}

const HEADLINE_DOC = join(root, 'docs/performance.md');
const HEADLINE_START = '<!-- headline: `npm run bench` writes what follows, up to the end mark -->';
const HEADLINE_END = '<!-- end of headline -->';

/** Puts the run's headline between docs/performance.md's two marks. */
function writeHeadline(table: string): void {
  const doc = readFileSync(HEADLINE_DOC, 'utf8');
  const start = doc.indexOf(HEADLINE_START);
  const end = doc.indexOf(HEADLINE_END);
  if (start < 0 || end < start) throw new Error(`docs/performance.md has lost its headline marks (${HEADLINE_START} … ${HEADLINE_END})`);
  writeFileSync(HEADLINE_DOC, `${doc.slice(0, start + HEADLINE_START.length)}\n\n${table}\n${doc.slice(end)}`);
}

await main();
