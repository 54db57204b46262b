import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OPERATIONS, type OperationId } from '../src/operations/index.js';
import { estimatePeakBytes } from '../src/http/memory/estimates.js';
import { measurePeak } from '../scripts/measure-memory.js';
import { shapesOf } from '../scripts/memory-shapes.js';

// The admission control reserves estimatePeakBytes for each request: no measured peak may be
// above it. Each measurement answers one body in a fresh process, as a worker thread does
// (scripts/memory-probe.ts), on the costliest bodies of each operation. `npm run measure:memory`
// measures the same up to BODY_LIMIT.

const SIZE = 2 * 1024 * 1024;
const MIB = 1024 * 1024;

describe('memory estimates are not below measured peaks', () => {
  for (const operation of Object.keys(OPERATIONS) as OperationId[]) {
    if (operation.startsWith('legacy')) continue; // the same work as their successors
    for (const shape of shapesOf(operation)) {
      test(`${operation}, ${shape}, 2 MiB`, (t) => {
        const measured = measurePeak(operation, shape, SIZE);
        const estimate = estimatePeakBytes(OPERATIONS[operation].memory, measured.bodyBytes, true);
        t.diagnostic(`peak ${(measured.peakBytes / MIB).toFixed(1)} MiB, estimate ${(estimate / MIB).toFixed(1)} MiB`);
        assert.equal(measured.status, 200, 'the body is one the operation answers');
        assert.ok(measured.peakBytes <= estimate, `peak ${measured.peakBytes} > estimate ${estimate}`);
      });
    }
  }
});
