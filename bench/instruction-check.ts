/**
 * The per-request regression check of bench/instructions.ts: a figure measured now against
 * the one saved in bench/results/per-request/instructions.json. What a process's V8 state adds (a
 * collection, a burst of compiling, code left in a lower tier, deprecated maps) only ever adds
 * instructions, so the least figure over its windows, and over the processes measured, is the one
 * compared: a regression in the code raises every process, the machine's state only some.
 */

/** One target's figure for one scenario: its instructions per request. */
export interface InstructionFigure {
  readonly target: string;
  readonly scenario: string;
  readonly instructionsPerRequest: number;
}

export interface Verdict {
  readonly target: string;
  readonly scenario: string;
  readonly measured: number;
  readonly saved: number;
  /** measured / saved */
  readonly ratio: number;
  readonly over: boolean;
}

/**
 * The verdict on each figure that has a saved one: over when it is more than `margin` (a
 * fraction) above it. A figure with none saved is left out.
 *
 * @example
 * verdicts([{ target: 'service', scenario: 'S1', instructionsPerRequest: 120_000 }],
 *          [{ target: 'service', scenario: 'S1', instructionsPerRequest: 100_000 }], 0.15)[0].over //=> true
 */
export function verdicts(measured: readonly InstructionFigure[], saved: readonly InstructionFigure[], margin: number): Verdict[] {
  if (!(margin >= 0)) throw new RangeError(`--margin must be a fraction of at least 0, such as 0.15, not ${margin}`);
  return measured.flatMap((figure) => {
    const before = saved.find((s) => s.target === figure.target && s.scenario === figure.scenario);
    if (before === undefined) return [];
    const ratio = figure.instructionsPerRequest / before.instructionsPerRequest;
    return [
      {
        target: figure.target,
        scenario: figure.scenario,
        measured: figure.instructionsPerRequest,
        saved: before.instructionsPerRequest,
        ratio,
        over: ratio > 1 + margin,
      },
    ];
  });
}

/**
 * The least figure of each target and scenario over several processes' measurements.
 *
 * @example
 * leastOf([[{ target: 's', scenario: 'S1', instructionsPerRequest: 150 }], [{ target: 's', scenario: 'S1', instructionsPerRequest: 120 }]])
 * //=> [{ target: 's', scenario: 'S1', instructionsPerRequest: 120 }]
 */
export function leastOf<T extends InstructionFigure>(processes: ReadonlyArray<readonly T[]>): T[] {
  const least = new Map<string, T>();
  for (const figures of processes)
    for (const figure of figures) {
      const key = `${figure.target}\t${figure.scenario}`;
      const kept = least.get(key);
      if (kept === undefined || figure.instructionsPerRequest < kept.instructionsPerRequest) least.set(key, figure);
    }
  return [...least.values()];
}
