/**
 * `npm run deps:latest`: would today's newest releases break the service? In a scratch copy of the
 * tracked files, every dependency (and dev dependency) is set to its newest release within its
 * major version (for a 0.x package, within its minor: npm's `^`, since semver lets a 0.x minor
 * break), installed without the lock file, built and tested with `npm run test:quick`. The
 * checkout itself is untouched. Prints each package that moved and the test's outcome; exits 1 when
 * the tests fail or an install does.
 *
 *   npm run deps:latest                      # scratch copy in a temporary folder, removed after
 *   npm run deps:latest -- --keep            # keep it, to look into a failure
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const keep = process.argv.includes('--keep');

type Manifest = { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

/** The range "within its major version" of a pinned version: `^1.2.3` is below 2.0.0, `^0.301.0` below 0.302.0. */
const withinMajor = (pinned: string): string => `^${pinned}`;

/** The newest release npm's registry has in a range (npm view lists every match; the last is the newest). */
function newestIn(name: string, range: string): string {
  const out = execFileSync('npm', ['view', `${name}@${range}`, 'version', '--json'], { encoding: 'utf8' });
  const versions = JSON.parse(out) as string | string[];
  return Array.isArray(versions) ? (versions.at(-1) as string) : versions;
}

function newestOf(deps: Record<string, string> | undefined, workspaces: ReadonlySet<string>): { updated: Record<string, string>; moved: string[] } {
  const updated: Record<string, string> = {};
  const moved: string[] = [];
  for (const [name, pinned] of Object.entries(deps ?? {})) {
    // The client is this repository's own workspace: it stays as it is.
    if (workspaces.has(name) || !/^\d+\.\d+\.\d+$/.test(pinned)) {
      updated[name] = pinned;
      continue;
    }
    const newest = newestIn(name, withinMajor(pinned));
    updated[name] = newest;
    if (newest !== pinned) moved.push(`${name} ${pinned} -> ${newest}`);
  }
  return { updated, moved };
}

const scratch = mkdtempSync(join(tmpdir(), 'deps-latest-'));
try {
  // The files a fresh clone has: no dist/, no node_modules, no lock file's pins once removed below.
  execFileSync('sh', ['-c', `git ls-files -z | xargs -0 tar -cf - | tar -xf - -C '${scratch}'`], { cwd: root });
  const workspaces = new Set(['json-utility-client']);
  const manifests = ['package.json', 'packages/client/package.json'];
  const moved: string[] = [];
  for (const file of manifests) {
    const path = join(scratch, file);
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    for (const field of ['dependencies', 'devDependencies'] as const) {
      if (manifest[field] === undefined) continue;
      const newest = newestOf(manifest[field], workspaces);
      manifest[field] = newest.updated;
      moved.push(...newest.moved.map((line) => `${file}: ${line}`));
    }
    writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
  }
  rmSync(join(scratch, 'package-lock.json'));
  process.stdout.write(moved.length === 0 ? 'every dependency is at its newest release within its major version\n' : `${moved.join('\n')}\n`);
  const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' };
  const step = (args: string[]): boolean => {
    process.stdout.write(`\n$ npm ${args.join(' ')}   (in ${scratch})\n`);
    return spawnSync('npm', args, { cwd: scratch, env, stdio: 'inherit' }).status === 0;
  };
  const passed = step(['install']) && step(['run', 'build']) && step(['run', 'test:quick']);
  process.stdout.write(`\ndeps:latest: ${moved.length} package(s) moved; test:quick ${passed ? 'passed' : 'FAILED'}${keep ? ` (kept: ${scratch})` : ''}\n`);
  process.exitCode = passed ? 0 : 1;
} finally {
  if (!keep) rmSync(scratch, { recursive: true, force: true });
}
