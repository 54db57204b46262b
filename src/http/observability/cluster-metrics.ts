import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/**
 * The cluster's metrics (WORKERS > 1): prom-client's AggregatorRegistry sums every worker's in the
 * primary; a worker scraped on the API port (no ADMIN_PORT) asks the primary by IPC message.
 */

/**
 * In a cluster worker: these registries answer the primary's collections (prom-client's cluster messages).
 *
 * @example
 * if (cluster.isWorker) answerPrimaryCollections([registry]);
 */
export function answerPrimaryCollections(registries: Registry[]): void {
  AggregatorRegistry.setRegistries(registries);
  // Constructing one is what makes prom-client answer the primary's collection requests here.
  new AggregatorRegistry();
}

const METRICS_REQUEST = 'json-utility:metrics-request';
const METRICS_RESPONSE = 'json-utility:metrics-response';
const CLUSTER_METRICS_TIMEOUT_MS = 5_000;

interface MetricsMessage {
  type: string;
  id: number;
  text?: string;
  error?: string;
}

let nextRequestId = 0;
const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();

/**
 * In a cluster worker scraped on the API port: every worker's metrics, asked of the primary
 * (which relays with `clusterMetrics(true)`), or an error after 5 s without an answer.
 *
 * @example
 * const text = await askPrimaryForClusterMetrics();
 */
export function askPrimaryForClusterMetrics(): Promise<string> {
  if (pending.size === 0) process.on('message', onPrimaryAnswer);
  const id = nextRequestId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => settle(id, new Error('the primary did not answer for the cluster metrics')), CLUSTER_METRICS_TIMEOUT_MS);
    pending.set(id, {
      resolve: (text) => (clearTimeout(timer), resolve(text)),
      reject: (error) => (clearTimeout(timer), reject(error)),
    });
    process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsMessage);
  });
}

function settle(id: number, outcome: string | Error): void {
  const waiting = pending.get(id);
  if (waiting === undefined) return;
  pending.delete(id);
  if (pending.size === 0) process.off('message', onPrimaryAnswer);
  if (outcome instanceof Error) waiting.reject(outcome);
  else waiting.resolve(outcome);
}

function onPrimaryAnswer(message: unknown): void {
  const answer = message as Partial<MetricsMessage>;
  if (answer?.type !== METRICS_RESPONSE || typeof answer.id !== 'number') return;
  settle(answer.id, answer.text ?? new Error(answer.error ?? 'no metrics'));
}

/**
 * In the primary: every worker's metrics, summed by prom-client's `AggregatorRegistry`, for the
 * admin port; with `relay` also sent to a worker scraped on the API port (no ADMIN_PORT).
 *
 * @example
 * const metrics = clusterMetrics(config.adminPort === 'off'); await metrics.text();
 */
export function clusterMetrics(relay: boolean): { text(): Promise<string>; readonly contentType: string } {
  const aggregator = new AggregatorRegistry();
  if (relay) {
    cluster.on('message', (worker, message: Partial<MetricsMessage>) => {
      if (message?.type !== METRICS_REQUEST || typeof message.id !== 'number') return;
      const id = message.id;
      aggregator.clusterMetrics().then(
        (text) => worker.send({ type: METRICS_RESPONSE, id, text } satisfies MetricsMessage),
        (error: Error) => worker.send({ type: METRICS_RESPONSE, id, error: error.message } satisfies MetricsMessage),
      );
    });
  }
  return { contentType: aggregator.contentType, text: () => aggregator.clusterMetrics() };
}
