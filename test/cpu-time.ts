/**
 * CPU milliseconds this process spends in `work`: unlike wall time, it does not grow when other
 * test files run on the other core, so time limits in tests stay meaningful and stable.
 */
export async function cpuMillis(work: () => unknown): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
}
