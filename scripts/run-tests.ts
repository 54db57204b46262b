/**
 * Runs a test tier of scripts/test-tiers.ts with Node's test runner (docs/development.md, "Tests"):
 *
 *   npx tsx scripts/run-tests.ts unit    # in two processes, each file without a process of its own: seconds
 *   npx tsx scripts/run-tests.ts quick   # unit as above and, at the same time, quick (a process per file, two at a time)
 *   npx tsx scripts/run-tests.ts suite   # quick, then the slow files, then the serial ones one at a time
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { QUICK, SERIAL, slowTestFiles, UNIT } from './test-tiers.js';

function runNodeTests(args: readonly string[]): void {
  const { status, signal } = spawnSync(process.execPath, ['--import', 'tsx', '--test', ...args], { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? (signal === null ? 1 : 128));
}

/** Runs each list of arguments in a test runner of its own, all at once; true when every one passed. */
async function runAtOnce(runs: ReadonlyArray<readonly string[]>): Promise<boolean> {
  const children = runs.map((args) => spawn(process.execPath, ['--import', 'tsx', '--test', ...args], { stdio: 'inherit' }));
  const codes = await Promise.all(children.map(async (child) => ((await once(child, 'exit')) as [number | null])[0]));
  return codes.every((code) => code === 0);
}

// The unit tier's files start nothing and share no state that matters: half of them in each of two
// runners, without a process per file, whose start costs more than most files' tests.
const UNIT_HALVES = [UNIT.filter((_, i) => i % 2 === 0), UNIT.filter((_, i) => i % 2 === 1)].map((files) => [
  '--experimental-test-isolation=none',
  '--test-reporter=dot',
  ...files,
]);

const tier = process.argv[2];
if (tier === 'unit') {
  if (!(await runAtOnce(UNIT_HALVES))) process.exit(1);
} else if (tier === 'quick') {
  if (!(await runAtOnce([...UNIT_HALVES, ['--test-concurrency=2', '--test-reporter=dot', ...QUICK]]))) process.exit(1);
} else if (tier === 'suite') {
  runNodeTests(['--test-concurrency=2', '--test-reporter=spec', ...UNIT, ...QUICK]);
  runNodeTests(['--test-concurrency=2', '--test-reporter=spec', ...slowTestFiles()]);
  runNodeTests(['--test-concurrency=1', '--test-reporter=spec', ...SERIAL]);
} else {
  process.stderr.write(`usage: tsx scripts/run-tests.ts unit|quick|suite (not ${JSON.stringify(tier)})\n`);
  process.exit(2);
}
