/**
 * Sums a V8 CPU profile (`node --cpu-prof`) by package and by function: self time, largest first.
 *   npx tsx bench/micro/cpu-profile-summary.ts <file>.cpuprofile
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const profile = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as Profile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
const add = (map: Map<string, number>, key: string, time: number) => map.set(key, (map.get(key) ?? 0) + time);
const root = new URL('../..', import.meta.url).href;

function packageOf(url: string, functionName: string): string {
  if (url.startsWith('node_modules/')) {
    const parts = url.split('/');
    return parts.slice(1, parts[1]?.startsWith('@') === true ? 3 : 2).join('/');
  }
  if (url.startsWith('dist/') || url.startsWith('src/')) return 'service';
  if (url.startsWith('node:')) return 'node internals';
  return functionName || url || '(native)';
}

let total = 0;
profile.samples.forEach((id, i) => {
  const time = profile.timeDeltas[i] ?? 0;
  const { functionName, url: fullUrl, lineNumber } = (nodes.get(id) as ProfileNode).callFrame;
  const url = fullUrl.replace(root, '');
  total += time;
  add(byFunction, `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber}`, time);
  add(byPackage, packageOf(url, functionName), time);
});

const share = (time: number): string => `${((100 * time) / total).toFixed(1)}%`.padStart(6);
const largest = (map: Map<string, number>, count: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, count);
console.log(`total ${(total / 1000).toFixed(0)} ms`);
for (const [name, time] of largest(byPackage, 14)) console.log(`${share(time)} ${name}`);
console.log('---');
for (const [name, time] of largest(byFunction, 30)) console.log(`${share(time)} ${name}`);
