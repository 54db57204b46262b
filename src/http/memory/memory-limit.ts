import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

/**
 * The memory the service may use when `MEMORY_LIMIT=auto`: the container's limit where there is
 * one, else the machine's memory.
 */

export interface DetectedLimit {
  readonly bytes: number;
  /** Where the figure came from, for the startup line. */
  readonly source: 'cgroup' | 'machine';
}

// cgroup v2 and v1 write "max" or a number near 2^63 when there is no limit.
const CGROUP_FILES = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'];

function readCgroupLimit(): number | undefined {
  for (const file of CGROUP_FILES) {
    try {
      const text = readFileSync(file, 'utf8').trim();
      if (/^\d+$/.test(text)) return Number(text);
    } catch {
      // not this cgroup version, or not Linux
    }
  }
  return undefined;
}

/**
 * The container's memory limit, or the machine's memory when there is none or it is larger.
 * `process.constrainedMemory()` (Node 19.6+) reads the cgroup for us but answers 2^64 (or 0)
 * where there is no limit; the cgroup files are the fallback for runtimes without it.
 *
 * @example
 * detectMemoryLimit() //=> { bytes: 1073741824, source: 'cgroup' } in a container limited to 1 GiB
 */
export function detectMemoryLimit(
  constrained: number | undefined = process.constrainedMemory?.(),
  cgroup: number | undefined = readCgroupLimit(),
  machine: number = totalmem(),
): DetectedLimit {
  for (const candidate of [constrained, cgroup]) {
    if (candidate !== undefined && candidate > 0 && candidate < machine) return { bytes: candidate, source: 'cgroup' };
  }
  return { bytes: machine, source: 'machine' };
}

// The cluster's primary only forks, supervises and sums metrics: this much of the limit is left to it.
const PRIMARY_RESERVE_BYTES = 64 * 1024 * 1024;

/**
 * Each process's share of `limit`: all of it with one process, else an equal part of what the
 * primary leaves.
 *
 * @example
 * processShare(768 * 2 ** 20, 2) //=> 352 MiB
 */
export function processShare(limit: number, workers: number): number {
  return workers <= 1 ? limit : Math.floor((limit - PRIMARY_RESERVE_BYTES) / workers);
}
