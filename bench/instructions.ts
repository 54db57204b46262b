/**
 * Instructions per request, counted by callgrind (valgrind), which the machine's noise cannot move:
 * each target runs under `valgrind --tool=callgrind`, gets the bench's mixed warm-up (its requests one at a time;
 * with `--warmup-loads N`, N passes of every scenario with ten requests in flight, fewer requests than
 * the bench's second of load, which callgrind would make last many minutes), then one
 * keep-alive connection sends the scenario in `--windows` windows of N requests, each between two
 * `callgrind_control --dump`s; a window's total over N is its figure, and the least of the windows
 * after the first is the result. The first windows still pay V8's tiering (its optimizing compiler runs in them, and
 * code runs in its baseline tier with inline-cache stubs); the windows show when that has settled.
 * Idling is counted too (the quieter of two stretches) and taken off (timers: the connections check, metrics'
 * event-loop sampling). Only user-space instructions count: the kernel's read and writev are not.
 *
 *   npx tsx bench/instructions.ts                                  # service, fastify, node-features; S1 and S2
 *   npx tsx bench/instructions.ts --targets service --functions    # and where they go, by package and by function
 *   npx tsx bench/instructions.ts --targets service --env CORS_ORIGINS=off   # one feature's share, by difference
 *   npx tsx bench/instructions.ts --targets service --check bench/results/per-request/instructions.json
 *                                                                        # fails past the saved figure plus its margin,
 *                                                                        # measured in up to --attempts (5) processes
 *   npx tsx bench/instructions.ts --targets service --node-flag=--max-semi-space-size=32   # a V8 flag's effect
 *   npx tsx bench/instructions.ts --warmup-loads 3                 # after every scenario with requests in flight
 *   npx tsx bench/instructions.ts --targets service --scenarios S2 --header 'if-none-match:"c-x4te00Ohn9UicoH5duj7mgd5R3w"'   # its 304
 *   npx tsx bench/instructions.ts --targets service-traced,service-traced+b64 --variant b64:OTEL_BSP_MAX_EXPORT_BATCH_SIZE=64
 *                                                                        # a setting's effect (bench/targets.ts, defineVariant)
 *   npx tsx bench/instructions.ts --targets service --fresh --scenarios S1   # before any other request: the drift, by difference
 *   npx tsx bench/instructions.ts --targets service --functions --callers 'IC_Megamorphic'   # who pays those functions' cost
 *   npx tsx bench/instructions.ts --targets service,service-before --processes 3   # each target in 3 processes, in turn; the least kept
 *
 * `--functions` starts the target with `--perf-basic-prof`, so that the addresses of JIT code can
 * be named from /tmp/perf-<pid>.map; that flag changes the counts a little, so totals come from
 * runs without it. It also lists V8's runtime functions for shape changes (`shapeChanges` in the
 * result: map transitions, migrations, computed keys in literals) with their callers, two levels
 * up. Build first (`npm run build`).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { scenarios, type Scenario } from './scenarios.js';
import { defineVariant, entryOf, targetOf, type TargetName } from './targets.js';
import { leastOf, verdicts } from './report.js';
import { mixedRequests, WARM_UP_PASSES } from './warm-up.js';

const { values: flags } = parseArgs({
  options: {
    targets: { type: 'string', default: 'service,fastify,node-features' },
    scenarios: { type: 'string', default: 'S1,S2' },
    requests: { type: 'string', default: '2000' },
    windows: { type: 'string', default: '3' },
    functions: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    'node-flag': { type: 'string', multiple: true, default: [] },
    variant: { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
    check: { type: 'string' },
    margin: { type: 'string', default: '0.15' },
    attempts: { type: 'string', default: '5' },
    // A process can fall into a mode of Node's that costs a quarter to a half more a request (bench/results/cacheable-get.md),
    // and a window's collections move a figure by a few per cent: the least of several processes is the build's.
    processes: { type: 'string', default: '1' },
    'warmup-loads': { type: 'string', default: '0' },
    fresh: { type: 'boolean', default: false },
    callers: { type: 'string' },
    // NAME:VALUE on every measured request, e.g. `if-none-match:"c-…"` for a 304's cost beside the 200's.
    header: { type: 'string', multiple: true, default: [] },
  },
});
const measuredHeaders = Object.fromEntries(flags.header.map((pair) => [pair.slice(0, pair.indexOf(':')), pair.slice(pair.indexOf(':') + 1)]));
const count = Number(flags.requests);
const attempts = Number(flags.attempts);
if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`--attempts must be a whole number of processes, at least 1, not ${flags.attempts}`);
const processCount = Number(flags.processes);
if (!Number.isInteger(processCount) || processCount < 1) throw new RangeError(`--processes must be a whole number, at least 1, not ${flags.processes}`);
const warmupLoads = Number(flags['warmup-loads']);
if (!Number.isInteger(warmupLoads) || warmupLoads < 0) throw new RangeError(`--warmup-loads must be a whole number of passes, not ${flags['warmup-loads']}`);
if (flags.callers !== undefined && !flags.functions) throw new RangeError('--callers names functions: it needs --functions');
const chosen = scenarios().filter((scenario) => flags.scenarios.split(',').includes(scenario.id));
const extraEnv = Object.fromEntries(flags.env.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const log = (line: string) => process.stderr.write(`${line}\n`);

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function send(base: string, scenario: Pick<Scenario, 'method' | 'path' | 'body'>, through = agent, extra: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      base + scenario.path,
      { method: scenario.method, agent: through, headers: { ...(scenario.body === undefined ? {} : { 'content-type': 'application/json' }), ...extra } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    call.on('error', reject);
    call.end(scenario.body);
  });
}

// The passes under load: ten requests in flight, on connections of their own.
const IN_FLIGHT = 10;

/**
 * One pass of every scenario with IN_FLIGHT requests at a time: 100 of a small one, fewer of a
 * large body (8 of S4's 2 MB), as callgrind runs about fifty times slower. Each scenario has new
 * connections: a server's keep-alive timeout can close idle ones between two under callgrind.
 */
async function loadPass(base: string): Promise<void> {
  for (const scenario of scenarios()) {
    const count = Math.max(8, Math.min(100, Math.round(200_000 / (scenario.body?.length ?? 1))));
    const through = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    let next = 0;
    const worker = async () => {
      while (next++ < count) await send(base, scenario, through);
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    through.destroy();
  }
}

/**
 * Self and inclusive instructions by function name (and the object it lives in) in one callgrind
 * dump; the total. A function's inclusive cost is its own plus that of the calls it makes (to
 * other functions: a recursive call's cost is already in the caller's), so a hook's inclusive cost
 * holds the runtime calls, inline-cache misses and allocations it causes.
 */
function readDump(file: string): { total: number; self: Map<string, number>; calls: Map<string, number> } {
  const names = { fn: new Map<string, string>(), ob: new Map<string, string>() };
  const named = (kind: 'fn' | 'ob', text: string): string => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(text);
    if (match === null) return text;
    if (match[2] !== undefined) names[kind].set(match[1] as string, match[2]);
    return names[kind].get(match[1] as string) ?? text;
  };
  const self = new Map<string, number>();
  // Inclusive cost of calls by caller and callee, `fn\tob\tcallee`: summed by name once JIT code is named.
  const calls = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, cost: number) => map.set(key, (map.get(key) ?? 0) + cost);
  let total = 0;
  let fn = '';
  let ob = '';
  let callee = '';
  let skipNext = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('summary:')) total = Number(line.slice(8));
    else if (line.startsWith('ob=')) ob = named('ob', line.slice(3));
    else if (line.startsWith('fn=')) fn = named('fn', line.slice(3));
    else if (line.startsWith('cfn=')) callee = named('fn', line.slice(4));
    else if (line.startsWith('cob=')) named('ob', line.slice(4));
    else if (line.startsWith('calls=')) skipNext = true;
    else if (/^[0-9+*-]/.test(line)) {
      const cost = Number(line.split(' ')[1] ?? 0);
      const key = `${fn}\t${ob}`;
      if (skipNext) add(calls, `${key}\t${callee}`, cost);
      else add(self, key, cost);
      skipNext = false;
    }
  }
  return { total, self, calls };
}

interface CodeRange {
  start: number;
  end: number;
  name: string;
}
function readPerfMap(pid: number): CodeRange[] {
  const file = `/tmp/perf-${pid}.map`;
  if (!existsSync(file)) return [];
  const ranges = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start = '0', size = '0', ...name] = line.split(' ');
      return { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), name: name.join(' ') };
    });
  return ranges.sort((a, b) => a.start - b.start);
}
function nameOf(address: number, ranges: CodeRange[]): string | undefined {
  let low = 0;
  let high = ranges.length - 1;
  let found: CodeRange | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const range = ranges[middle] as CodeRange;
    if (range.start <= address) {
      found = range;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found !== undefined && address < found.end ? found.name : undefined;
}

/** Which part of the stack a function belongs to: a package, the service, Node's JS, V8, libc. */
function groupOf(name: string, object: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(name);
  if (pkg !== null) return pkg[1] as string;
  if (/\/dist\/|\/bench\//.test(name)) return 'the target itself';
  if (/ node:/.test(name)) return 'node (JS)';
  if (/^Builtins?[_:]|^Builtin:/.test(name)) return 'V8 builtins';
  if (/^0x/.test(name)) return 'JIT code (unnamed)';
  if (/libc|ld-linux|libm/.test(object)) return 'libc';
  return 'node and V8 (C++)';
}

interface Measured {
  target: string;
  scenario: string;
  requests: number;
  /** Each window's figure, in order; the result is the least after the first. */
  windows: number[];
  instructionsPerRequest: number;
  idlePerSecond: number;
  byGroup?: Record<string, number>;
  topFunctions?: Array<[string, number]>;
  /** JavaScript functions by inclusive instructions a request: what each stage costs with all it calls. */
  topInclusive?: Array<[string, number]>;
  /** The target's own functions (its hooks, handlers, engine) by inclusive instructions, each with what it calls. */
  ownFunctions?: Array<{ function: string; inclusive: number; callees: Array<[string, number]> }>;
  /**
   * V8's runtime functions that change objects' shapes (map transitions, migrations, keyed
   * definitions), each with who calls it and who calls those: the objects on the path that take
   * their properties in changing orders, by computed key, or after they were made.
   */
  shapeChanges?: Array<{ function: string; instructions: number; callers: Array<[string, number, Array<[string, number]>]> }>;
  /** With `--callers REGEX`: the functions it matches, each with who calls it and who calls those (what a megamorphic inline cache's cost is spent for). */
  callersOf?: Array<{ function: string; instructions: number; callers: Array<[string, number, Array<[string, number]>]> }>;
}

// V8's runtime functions for shape changes (issue 59).
const SHAPE_CHANGE =
  /Runtime_(DefineKeyedOwnPropertyInLiteral|DefineKeyedOwnIC|KeyedStoreIC|StoreIC|SetKeyedProperty|SetNamedProperty|DefineObjectOwnProperty|CreateObjectLiteral)|MigrateToMap|TransitionToDataProperty|TransitionsAccessor|Map::(CopyWith|Normalize|Update|GeneralizeField|TryUpdate)|JSObject::(MigrateInstance|NormalizeProperties|OptimizeAsPrototype)/;

// valgrind and vgdb (behind callgrind_control) name their shared pipe after the user and host
// from the environment: the same values on both sides, whatever the shell has.
const VGDB_ENV = { USER: 'bench', LOGNAME: 'bench', HOST: 'bench' };

async function measure(name: TargetName, which: readonly Scenario[] = chosen): Promise<Measured[]> {
  const dir = mkdtempSync(join(tmpdir(), 'callgrind-'));
  const target = targetOf(name);
  // A traced target exports to the collector BENCH_COLLECTOR names (bench/otlp-receiver, started by hand).
  const collector = process.env.BENCH_COLLECTOR;
  if (target.traced && collector === undefined) throw new Error(`${name} exports spans: set BENCH_COLLECTOR to an OTLP/HTTP receiver's URL`);
  const tracing = target.traced ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector as string } : {};
  const nodeFlags = [...flags['node-flag'], ...(flags.functions ? ['--perf-basic-prof'] : [])];
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${join(dir, 'cg.out')}`, process.execPath, ...nodeFlags, entryOf(name)],
    {
      // HOST is the target's listening address too: valgrind reads it first, so vgdb gets the same.
      env: { ...process.env, ...VGDB_ENV, ...target.env, ...tracing, PORT: '0', HOST: '127.0.0.1', ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 300_000;
  let base: string | undefined;
  while (base === undefined) {
    base = /listening on (http:\/\/[^\s"]+)/.exec(output)?.[1];
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${name} did not start under valgrind:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  log(`${name}: started under callgrind at ${base}`);
  const pid = child.pid as number;
  let dumps = 0;
  const dump = () => {
    execFileSync('callgrind_control', ['--dump', String(pid)], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, ...VGDB_ENV, HOST: '127.0.0.1' },
    });
    dumps++;
    for (let tries = 0; tries < 600; tries++) {
      // The main thread alone (--separate-threads): V8 compiles and collects partly on helper threads, at moments that vary.
      const file = join(dir, `cg.out.${dumps}-01`);
      if (existsSync(file) && readFileSync(file, 'utf8').includes('\ntotals:')) return readDump(file);
      execFileSync('sleep', ['0.1']);
    }
    throw new Error(`no callgrind dump ${dumps} in ${dir}: ${readdirSync(dir).join(', ')}`);
  };
  try {
    // --fresh: no mixed warm-up, the figure a process has before it served anything else (issue 59's drift, by function).
    if (!flags.fresh) for (let pass = 0; pass < WARM_UP_PASSES; pass++) for (const request of mixedRequests()) await send(base, request);
    for (let pass = 0; pass < warmupLoads; pass++) await loadPass(base);
    const results: Measured[] = [];
    for (const scenario of which) {
      const expected = flags.header.length === 0 ? 200 : await send(base, scenario, agent, measuredHeaders);
      if ((await send(base, scenario, agent, measuredHeaders)) !== expected || ![200, 304].includes(expected))
        throw new Error(`${name} does not answer ${scenario.id} with 200 (or 304, with --header)`);
      const windows: Array<{ total: number; seconds: number; self: Map<string, number>; calls: Map<string, number> }> = [];
      for (let w = 0; w < Number(flags.windows); w++) {
        dump();
        const started = performance.now();
        for (let i = 0; i < count; i++) await send(base, scenario, agent, measuredHeaders);
        const seconds = (performance.now() - started) / 1000;
        windows.push({ ...dump(), seconds });
      }
      // Two idle stretches, the quieter one counted: a collection or compiling that lands in one would
      // make idling look dearer than it is, and take too much off every window (seen: 3.3 million a second against 0.47).
      const idleSeconds = 5;
      const idleRates: number[] = [];
      for (let stretch = 0; stretch < 2; stretch++) {
        dump();
        await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
        idleRates.push(dump().total / idleSeconds);
      }
      const idlePerSecond = Math.min(...idleRates);
      const figures = windows.map((w) => Math.round((w.total - idlePerSecond * w.seconds) / count));
      // By function, the window whose figure is the result: the least after the first.
      const least = figures.indexOf(Math.min(...(figures.length > 1 ? figures.slice(1) : figures)));
      const busy = windows[least] as (typeof windows)[number];
      const result: Measured = {
        target: name,
        scenario: scenario.id,
        requests: count,
        windows: figures,
        // A window that holds a collection or a burst of compiling only adds: the least after the first (V8 tiering up) is the figure.
        instructionsPerRequest: Math.min(...(figures.length > 1 ? figures.slice(1) : figures)),
        idlePerSecond: Math.round(idlePerSecond),
      };
      if (flags.functions) {
        const ranges = readPerfMap(pid);
        const groups = new Map<string, number>();
        const functions = new Map<string, number>();
        const inclusive = new Map<string, number>();
        const add = (map: Map<string, number>, key: string, cost: number) => map.set(key, (map.get(key) ?? 0) + cost / count);
        const named = (fn: string) => {
          const address = /^0x[0-9a-f]+$/.test(fn) ? parseInt(fn, 16) : undefined;
          return (address === undefined ? undefined : nameOf(address, ranges)) ?? fn;
        };
        for (const [key, cost] of busy.self) {
          const [fn = '', ob = ''] = key.split('\t');
          const name = named(fn);
          add(groups, groupOf(name, ob), cost);
          add(functions, name, cost);
          add(inclusive, name, cost);
        }
        // What the target's own functions call, by callee: where a stage's inclusive cost goes; and
        // every function's callers, for the shape changes below.
        const callees = new Map<string, Map<string, number>>();
        const callersOf = new Map<string, Map<string, number>>();
        // A call within one function (recursion, or two entries of one piece of JIT code) is already counted.
        for (const [key, cost] of busy.calls) {
          const [fn = '', , callee = ''] = key.split('\t');
          const name = named(fn);
          const calleeName = named(callee);
          if (calleeName === name) continue;
          add(inclusive, name, cost);
          callersOf.set(calleeName, add(callersOf.get(calleeName) ?? new Map<string, number>(), name, cost));
          if (groupOf(name, '') === 'the target itself') callees.set(name, add(callees.get(name) ?? new Map<string, number>(), calleeName, cost));
        }
        const rounded = (entries: Iterable<[string, number]>, top: number) =>
          [...entries]
            .sort((a, b) => b[1] - a[1])
            .slice(0, top)
            .map(([fn, n]): [string, number] => [fn, Math.round(n)]);
        result.topInclusive = rounded(
          [...inclusive].filter(([fn]) => fn.startsWith('JS:')),
          120,
        );
        result.ownFunctions = rounded(
          [...inclusive].filter(([fn]) => groupOf(fn, '') === 'the target itself'),
          40,
        ).map(([fn, n]) => ({ function: fn, inclusive: n, callees: rounded(callees.get(fn) ?? [], 12) }));
        result.byGroup = Object.fromEntries([...groups].sort((a, b) => b[1] - a[1]).map(([group, n]) => [group, Math.round(n)]));
        // Who calls each shape change, and who calls those. The second level is only a lead: V8's
        // runtime entry (CEntry) is one function for every runtime call, so its callers are all of theirs.
        const callersTwoUp = (fn: string, top: number) =>
          rounded(callersOf.get(fn) ?? [], top).map(([caller, cost]): [string, number, Array<[string, number]>] => [
            caller,
            cost,
            caller.startsWith('JS:') ? [] : rounded(callersOf.get(caller) ?? [], 4),
          ]);
        result.shapeChanges = rounded(
          [...inclusive].filter(([fn]) => SHAPE_CHANGE.test(fn)),
          12,
        ).map(([fn, n]) => ({ function: fn, instructions: n, callers: callersTwoUp(fn, 6) }));
        if (flags.callers !== undefined) {
          const wanted = new RegExp(flags.callers);
          result.callersOf = rounded(
            [...functions].filter(([fn]) => wanted.test(fn)),
            12,
          ).map(([fn, n]) => ({ function: fn, instructions: n, callers: callersTwoUp(fn, 12) }));
        }
        result.topFunctions = [...functions]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 60)
          .map(([fn, n]) => [fn, Math.round(n)]);
      }
      log(
        `${name} ${scenario.id}: ${figures.map((n) => n.toLocaleString('en')).join(' then ')} instructions a request, by window (idle ${result.idlePerSecond.toLocaleString('en')}/s)`,
      );
      results.push(result);
    }
    return results;
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit').catch(() => undefined);
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
    if (flags.functions) rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
}

for (const spec of flags.variant) defineVariant(spec);
const targetNames = flags.targets.split(',') as TargetName[];
for (const name of targetNames) targetOf(name); // an unknown target or variant is named before any is measured
// The targets in turn, a process each a round: each process falls into Node's slow mode (--processes, above) or not on its own.
const rounds: Measured[][] = [];
for (let round = 0; round < processCount; round++) {
  const measured: Measured[] = [];
  for (const name of targetNames) measured.push(...(await measure(name)));
  rounds.push(measured);
}
const all = processCount === 1 ? (rounds[0] as Measured[]) : leastOf(rounds);
if (processCount > 1)
  for (const figure of all)
    log(
      `${figure.target} ${figure.scenario}: ${rounds.map((r) => r.find((m) => m.target === figure.target && m.scenario === figure.scenario)?.instructionsPerRequest.toLocaleString('en')).join(', ')} in ${processCount} processes; the least, ${figure.instructionsPerRequest.toLocaleString('en')}, kept`,
    );
const report = { node: process.version, env: extraEnv, requests: count, results: all };
if (flags.out !== undefined) writeFileSync(flags.out, `${JSON.stringify(report, null, 2)}\n`);
else process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);

if (flags.check !== undefined) {
  const saved = JSON.parse(readFileSync(flags.check, 'utf8')) as { results: Measured[] };
  const margin = Number(flags.margin);
  const processes: Measured[][] = [all];
  let judged = verdicts(leastOf(processes), saved.results, margin);
  // Over the margin: measured again in a new process, up to --attempts processes in all; the least is judged.
  for (let attempt = 1; attempt < attempts && judged.some((verdict) => verdict.over); attempt++) {
    const again: Measured[] = [];
    const over = judged.filter((verdict) => verdict.over);
    // The scenarios of one target over the margin are measured again in one new process, as they were.
    for (const target of new Set(over.map((verdict) => verdict.target))) {
      const ids = over.filter((verdict) => verdict.target === target).map((verdict) => verdict.scenario);
      log(`${target} ${ids.join(', ')}: over the margin; measuring again in a new process (${attempt + 1} of ${attempts})`);
      again.push(
        ...(await measure(
          target as TargetName,
          chosen.filter((scenario) => ids.includes(scenario.id)),
        )),
      );
    }
    processes.push(again);
    judged = verdicts(leastOf(processes), saved.results, margin);
  }
  for (const verdict of judged)
    log(
      `${verdict.over ? 'FAIL' : 'ok  '} ${verdict.target} ${verdict.scenario}: ${verdict.measured} against ${verdict.saved} saved (${verdict.ratio.toFixed(3)}x, margin ${margin}; the least over ${processes.filter((p) => p.some((m) => m.target === verdict.target && m.scenario === verdict.scenario)).length} process(es))`,
    );
  if (judged.some((verdict) => verdict.over)) process.exitCode = 1;
}
