import { execFileSync } from 'node:child_process';
import { CURRENT_OPERATION_IDS, OPERATIONS, type OperationId } from '../src/operations/index.js';
import { estimatePeakBytes } from '../src/http/memory/estimates.js';
import { shapesOf } from './memory-shapes.js';

/**
 * `npm run measure:memory [-- SIZE...]`: the peak memory of answering each operation's costliest
 * bodies (scripts/memory-shapes.ts), each in a fresh process, beside the estimate the admission
 * control reserves for it (src/http/memory/estimates.ts, from each operation's declared `memory`). Sizes in bytes; default 1, 4 and 16 MiB.
 */

export interface Measurement {
  operation: OperationId;
  shape: string;
  bodyBytes: number;
  peakBytes: number;
  status: number;
}

const PROBE = new URL('./memory-probe.ts', import.meta.url).pathname;

export function measurePeak(operation: OperationId, shape: string, bytes: number): Measurement {
  const output = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', PROBE, operation, shape, String(bytes)], { encoding: 'utf8' });
  return JSON.parse(output) as Measurement;
}

const MIB = 2 ** 20;

if (import.meta.url === `file://${process.argv[1]}`) {
  const sizes = process.argv.slice(2).map(Number);
  const rows: string[] = ['| operation | shape | body | peak | peak per body byte | estimate | status |', '| --- | --- | ---: | ---: | ---: | ---: | ---: |'];
  let tightest = Number.POSITIVE_INFINITY;
  for (const operation of Object.keys(OPERATIONS) as OperationId[]) {
    if (operation.startsWith('legacy')) continue; // the same work as their successors
    for (const shape of shapesOf(operation)) {
      for (const size of sizes.length > 0 ? sizes : [MIB, 4 * MIB, 16 * MIB]) {
        const m = measurePeak(operation, shape, size);
        const factor = m.peakBytes / m.bodyBytes;
        const estimate = estimatePeakBytes(OPERATIONS[operation].memory, m.bodyBytes, true);
        if (m.status === 200) tightest = Math.min(tightest, estimate / m.peakBytes);
        rows.push(
          `| ${operation} | ${shape} | ${(m.bodyBytes / MIB).toFixed(1)} MiB | ${(m.peakBytes / MIB).toFixed(0)} MiB | ${factor.toFixed(1)} | ${(estimate / MIB).toFixed(0)} MiB | ${m.status} |`,
        );
        process.stderr.write(`${rows.at(-1)}\n`);
      }
    }
  }
  const factors = CURRENT_OPERATION_IDS.map((operation) => `${operation} ${OPERATIONS[operation].memory}`).join(', ');
  process.stdout.write(
    `${rows.join('\n')}\n\nDeclared (peak bytes per body byte): ${factors}. Smallest estimate over measured peak: ${tightest.toFixed(2)}× (below 1 would be an estimate short of its peak)\n`,
  );
}
