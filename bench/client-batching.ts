import { Agent, fetch as undiciFetch } from 'undici';
import { createClient, type Client } from '../packages/client/src/index.js';
import type { RunningTarget } from './targets.js';

/**
 * The client's batching (issue 33): CALLS concurrent `client.isEven` calls from this one process,
 * through a fixed number of connections, with and without `batch`, alternating each round. Each
 * mode gives operations per second (the calls over the time until the last has settled) and the
 * latency of one call (from the call to its promise settling), p50 and p99.
 */

export interface ClientBatchRow {
  readonly mode: 'single' | 'batched';
  readonly round: number;
  readonly calls: number;
  readonly connections: number;
  readonly operationsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const CALLS = 10_000;

async function measure(client: Client, calls: number): Promise<{ seconds: number; latencies: number[] }> {
  const latencies = new Array<number>(calls);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      const at = performance.now();
      const answer = await client.isEven({ input: i });
      latencies[i] = performance.now() - at;
      if (answer.ret !== (i % 2 === 0)) throw new Error(`isEven ${i} answered ${JSON.stringify(answer)}`);
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

export async function clientBatching(
  service: RunningTarget,
  settings: { readonly rounds: number; readonly connections: number; readonly smoke: boolean },
  log: (line: string) => void,
): Promise<ClientBatchRow[]> {
  const agent = new Agent({ connections: settings.connections });
  const send = ((url: string, init: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
  const clients = {
    single: createClient({ baseUrl: service.base, fetch: send }),
    batched: createClient({ baseUrl: service.base, fetch: send, batch: { maxOperations: 1000 } }),
  };
  const calls = settings.smoke ? 200 : CALLS;
  const rows: ClientBatchRow[] = [];
  try {
    // One pass of each first: the connections open and both paths warm.
    for (const client of Object.values(clients)) await measure(client, calls);
    for (let round = 1; round <= settings.rounds; round++) {
      const order = round % 2 === 1 ? (['single', 'batched'] as const) : (['batched', 'single'] as const);
      for (const mode of order) {
        const { seconds, latencies } = await measure(clients[mode], calls);
        latencies.sort((a, b) => a - b);
        const row = {
          mode,
          round,
          calls,
          connections: settings.connections,
          operationsPerSecond: calls / seconds,
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
        };
        rows.push(row);
        log(
          `client ${mode.padEnd(7)} round ${round}: ${Math.round(row.operationsPerSecond)} calls/s, p50 ${row.p50Ms.toFixed(1)} ms, p99 ${row.p99Ms.toFixed(1)} ms`,
        );
      }
    }
  } finally {
    await agent.close();
  }
  return rows;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number) / 2 + (sorted[Math.ceil((sorted.length - 1) / 2)] as number) / 2;
};

/** The report's section: each mode's median over rounds, and batched over single per round. */
export function clientBatchingSection(rows: readonly ClientBatchRow[]): string[] {
  if (rows.length === 0) return [];
  const of = (mode: ClientBatchRow['mode']) => rows.filter((row) => row.mode === mode);
  const rounds = [...new Set(rows.map((row) => row.round))];
  const ratios = rounds.map((round) => {
    const [batched, single] = [of('batched'), of('single')].map((list) => list.find((row) => row.round === round) as ClientBatchRow);
    return (batched as ClientBatchRow).operationsPerSecond / (single as ClientBatchRow).operationsPerSecond;
  });
  const first = rows[0] as ClientBatchRow;
  const fixed = (n: number, digits = 1) => n.toFixed(digits);
  return [
    '',
    `## The client's batching (${first.calls.toLocaleString('en')} concurrent \`client.isEven\` calls from one process, ${first.connections} connections)`,
    '',
    '| Mode | calls/s (median) | p50 ms (median) | p99 ms (median) |',
    '| --- | ---: | ---: | ---: |',
    ...(['single', 'batched'] as const).map(
      (mode) =>
        `| ${mode === 'single' ? 'one request per call' : '`batch: { maxOperations: 1000 }`'} | ${Math.round(median(of(mode).map((r) => r.operationsPerSecond))).toLocaleString('en')} | ` +
        `${fixed(median(of(mode).map((r) => r.p50Ms)))} | ${fixed(median(of(mode).map((r) => r.p99Ms)))} |`,
    ),
    '',
    `Batched over single, each round: ${ratios.map((r) => fixed(r, 1)).join(', ')} (goal: at least 10, with p99 no worse).`,
  ];
}
