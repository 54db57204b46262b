/**
 * Where a target's CPU goes per request, natively, after the bench's whole mixed warm-up (its
 * requests one at a time and its passes under load: bench/warm-up.ts): `perf record` samples the
 * target's CPU (cpu-clock, 1,999 a second; JIT code named from `--perf-basic-prof`) during a 5 s
 * wrk load, after a 2 s one, and the samples are summed by where they fall (the service's own
 * JavaScript, each package, Node's JavaScript, V8's builtins, V8's and Node's C++, the kernel), in
 * samples per 1,000 requests: one sample per 1,000 requests is 0.5 µs of CPU a request. Each target
 * in its own process pinned to CPU 0, the targets alternating, the processes' figures averaged.
 * Unlike callgrind, it sees the process at its own speed, so V8's compiler threads keep their pace.
 *
 *   npx tsx bench/micro/perf-groups.ts service,fastify,node-features S1 2        # targets, scenario, processes
 *   npx tsx bench/micro/perf-groups.ts service,fastify S1 2 '^Builtins_'         # and the functions matching, by target
 *
 * Build first (`npm run build`); needs wrk and perf (linux-perf), run as root or with perf_event_paranoid ≤ 1.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateLoad } from '../load.js';
import { scenarios } from '../scenarios.js';
import { startTarget, type TargetName } from '../targets.js';
import { loadOf, warmUp, WARM_UP_PASSES } from '../warm-up.js';

const [targetList = 'service,fastify,node-features', scenarioId = 'S1', processesText = '2', pattern] = process.argv.slice(2);
const scenario = scenarios().find((s) => s.id === scenarioId);
if (scenario === undefined) throw new Error(`no scenario ${scenarioId}`);
if (!/^[1-9]\d*$/.test(processesText)) throw new Error(`processes must be a whole number of at least 1, not ${processesText}`);
const matching = pattern === undefined ? undefined : new RegExp(pattern);
const work = mkdtempSync(join(tmpdir(), 'perf-groups-'));
const [serverPin, loadPin] = [
  ['taskset', '-c', '0'],
  ['taskset', '-c', '1'],
];
const names = targetList.split(',') as TargetName[];

/** Where a sample falls, from its object (`dso`) and symbol. */
function groupOf(dso: string, symbol: string): string {
  if (symbol.startsWith('JS:') || symbol.startsWith('RegExp:')) {
    if (symbol.includes('/dist/')) return "the service's JavaScript";
    const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(symbol);
    if (inPackage) return inPackage[1] as string;
    if (symbol.startsWith('RegExp:')) return 'regular expressions';
    if (symbol.includes('node:')) return "Node's JavaScript";
    if (symbol.includes('/bench/')) return "the floor's JavaScript";
    return 'other JavaScript';
  }
  if (symbol.startsWith('Builtins_')) return "V8's builtins";
  if (dso === '[kernel.kallsyms]') return 'the kernel';
  if (dso.startsWith('libc')) return 'libc';
  if (symbol.startsWith('llhttp')) return 'llhttp';
  if (symbol.startsWith('v8::')) return "V8's C++";
  if (symbol.startsWith('node::') || symbol.startsWith('uv_') || symbol.startsWith('uv__')) return "Node's C++ and libuv";
  return 'other native code';
}

const byTarget = new Map<TargetName, { groups: Map<string, number>; functions: Map<string, number> }>();
const add = (into: Map<string, number>, key: string, value: number) => into.set(key, (into.get(key) ?? 0) + value);
const processes = Number(processesText);

for (let round = 0; round < processes; round++) {
  for (const name of names) {
    const target = await startTarget(name, serverPin, work, {}, ['--perf-basic-prof']);
    await warmUp(target.base, { passes: WARM_UP_PASSES, loads: 3, generator: 'wrk', pin: loadPin, workDir: work, connections: 50 });
    const load = loadOf(target.base, scenario, work, 50);
    await generateLoad('wrk', { ...load, seconds: 2 }, loadPin, work);
    const data = join(work, `${name}-${round}.data`);
    const recording = spawn('perf', ['record', '-F', '1999', '-p', String(target.pid), '-o', data, '--', 'sleep', '5'], { stdio: 'ignore' });
    const result = await generateLoad('wrk', { ...load, seconds: 5 }, loadPin, work);
    await once(recording, 'exit');
    await target.stop();
    const report = execFileSync('perf', ['report', '-i', data, '--stdio', '--no-children', '--sort', 'dso,sym', '-F', 'sample,dso,sym', '-t', '|'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const sums = byTarget.get(name) ?? { groups: new Map<string, number>(), functions: new Map<string, number>() };
    byTarget.set(name, sums);
    for (const line of report.split('\n')) {
      const [samples = '', dso = '', rawSymbol = ''] = line.split('|');
      if (!/^\s*\d+\s*$/.test(samples)) continue;
      const symbol = rawSymbol.trim().replace(/^\[.\]\s+/, '');
      // Samples per 1,000 requests of this load, averaged over the processes.
      const perThousand = (Number(samples) * 1000) / result.requests / processes;
      add(sums.groups, groupOf(dso.trim(), symbol), perThousand);
      if (matching?.test(symbol)) add(sums.functions, symbol, perThousand);
    }
    process.stderr.write(`${round} ${name}: ${Math.round(result.requestsPerSecond)} req/s\n`);
  }
}

const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
const table = (title: string, part: 'groups' | 'functions', limit: number) => {
  const first = byTarget.get(names[0] as TargetName)?.[part] ?? new Map<string, number>();
  const keys = [...new Set(names.flatMap((name) => [...(byTarget.get(name)?.[part].keys() ?? [])]))].sort((a, b) => (first.get(b) ?? 0) - (first.get(a) ?? 0));
  const lines = [row([title, ...names]), row(['---', ...names.map(() => '---:')])];
  for (const key of keys.slice(0, limit)) lines.push(row([key, ...names.map((name) => (byTarget.get(name)?.[part].get(key) ?? 0).toFixed(1))]));
  if (part === 'groups')
    lines.push(row(['all of it', ...names.map((name) => [...(byTarget.get(name)?.groups.values() ?? [])].reduce((a, b) => a + b, 0).toFixed(1))]));
  return lines.join('\n');
};
process.stdout.write(`${scenarioId}, ${processes} process(es) a target, samples per 1,000 requests (0.5 µs of CPU a request each):\n\n`);
process.stdout.write(`${table('where', 'groups', 40)}\n`);
if (matching !== undefined) process.stdout.write(`\n${table(`functions matching ${pattern}`, 'functions', 30)}\n`);
