import { availableParallelism } from 'node:os';
import { GIB, instant, integer, KIB, kind, MIB, milliseconds, MOST, oneOf, or, setting, size, type Setting } from './setting-kinds.js';

export { formatBytes } from './setting-kinds.js';

/**
 * Every setting of the service, read from the environment in one place. `SETTINGS` is also the
 * source of the configuration table in docs/operations.md (test/readme.test.ts keeps the two equal).
 */

/** ACCESS_LOG: which requests get an access-log line besides the 5xx and slow ones, which always do. */
export type AccessLog = { readonly mode: 'all' | 'errors' | 'minimal' } | { readonly mode: 'sample'; readonly every: number };

export const SETTINGS = {
  port: setting({ env: 'PORT', default: 3000, ...integer(0, 65535), meaning: 'TCP port to listen on (0 picks a free one)' }),
  host: setting({
    env: 'HOST',
    default: '127.0.0.1',
    ...kind('a host name or IP address', (raw) => raw || undefined),
    meaning: 'Address to listen on; `0.0.0.0` for every interface',
  }),
  adminPort: setting<number | 'off'>({
    env: 'ADMIN_PORT',
    default: 'off',
    ...or('off', integer(0, 65535), ' other than `PORT` (0 picks a free one)'),
    meaning:
      "A second port, on `HOST`, for `/healthz`, `/readyz` and `/metrics`, which then leave the API port; with `WORKERS` > 1 the primary serves it, with every worker's metrics summed. `off` serves them on the API port",
  }),
  workers: setting<number | 'auto'>({
    env: 'WORKERS',
    default: 1,
    ...or('auto', integer(1, 64)),
    meaning: 'Processes serving the port (node:cluster), `auto`: one per CPU; a crashed one is replaced',
  }),
  logLevel: setting({
    env: 'LOG_LEVEL',
    default: 'info' as const,
    ...oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    meaning: 'Level of the JSON log lines written to standard output',
  }),
  logFormat: setting({
    env: 'LOG_FORMAT',
    default: 'json',
    ...oneOf('json', 'pretty'),
    meaning: 'One JSON line per event (for machines), or colourised text (for a person at a terminal)',
  }),
  accessLog: setting<AccessLog>({
    env: 'ACCESS_LOG',
    default: { mode: 'minimal' },
    ...kind('`all`, `errors`, `sample:N` (one request in N, N from 1 to 1000000), or `minimal`', (raw) => {
      if (raw === 'all' || raw === 'errors' || raw === 'minimal') return { mode: raw };
      const every = /^sample:(\d+)$/.exec(raw)?.[1];
      const n = every === undefined ? undefined : integer(1, 1_000_000).parse(every);
      return n === undefined ? undefined : { mode: 'sample', every: n };
    }),
    meaning:
      'Which requests get a log line (`requestId`, method, url, route, status, ms): every one, those answered 4xx or 5xx, one in N, or `minimal`: only those every mode logs, which are every 5xx (at level error) but the 503s the service answers on purpose (a drain, overload control) and every request slower than `SLOW_REQUEST_MS` (at level warn). Counts and latencies of all are in `/metrics`',
  }),
  slowRequestMs: setting({
    env: 'SLOW_REQUEST_MS',
    default: 1_000,
    ...milliseconds(1),
    meaning: 'A request that takes longer is always logged (level warn), whatever `ACCESS_LOG` says',
  }),
  logFlushMs: setting({
    env: 'LOG_FLUSH_MS',
    default: 250,
    ...milliseconds(0, 10_000),
    meaning: 'Longest a JSON log line waits in a 64 KiB buffer before it is written; 0 writes every line at once. Buffered lines are written on exit',
  }),
  logBacklogBytes: setting({
    env: 'LOG_BACKLOG_BYTES',
    default: 8 * MIB,
    ...size(MIB, GIB),
    meaning:
      'Most log text waiting for standard output when whatever reads it falls behind (JSON logs); lines beyond it are dropped and counted in `log_lines_dropped_total`, so that a stalled log pipeline cannot exhaust memory',
  }),
  bodyLimit: setting({
    env: 'BODY_LIMIT',
    default: 16 * MIB,
    ...size(1, MOST),
    meaning: 'Largest request body; a larger one gets 413',
  }),
  compressMinBytes: setting<number | 'off'>({
    env: 'COMPRESS_MIN_BYTES',
    default: KIB,
    ...or('off', size(0)),
    meaning:
      'Answers of at least this size are compressed when the request asks for it (`Accept-Encoding`: zstd, br, gzip or deflate), smaller ones are sent as they are; `off` compresses none. Request bodies are decoded whatever it says',
  }),
  memoryLimit: setting<number | 'auto'>({
    env: 'MEMORY_LIMIT',
    default: 'auto',
    ...or('auto', size(128 * MIB)),
    meaning:
      "Memory the whole service may use. `auto`: the container's limit (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`), else the machine's memory. With `WORKERS` > 1 each worker gets an equal share. Requests are admitted by their estimated peak memory within it",
  }),
  admissionWaitMs: setting({
    env: 'ADMISSION_WAIT_MS',
    default: 2_000,
    ...milliseconds(0, 60_000),
    meaning: 'How long a request that does not fit in the memory budget now waits for room; then 503 with `Retry-After`',
  }),
  offloadBodyBytes: setting({
    env: 'OFFLOAD_BODY_BYTES',
    default: 64 * KIB,
    ...size(0),
    meaning:
      'Bodies larger than this are parsed and answered in the worker-thread pool, off the event loop that answers small requests and probes; 0 sends every body there',
  }),
  poolThreads: setting<number | 'auto'>({
    env: 'POOL_THREADS',
    default: 'auto',
    ...or('auto', integer(1, 64)),
    meaning: 'Worker threads per process that answer large bodies; `auto`: the CPUs per worker less one, at least 1',
  }),
  poolThreadNiceness: setting({
    env: 'POOL_THREAD_NICENESS',
    default: 0,
    ...integer(0, 19),
    meaning:
      "How much lower the pool threads' CPU priority is than the event loop's (Linux niceness, the threads' own). 0: a process beside the service on its CPU (another tenant) takes no more of it from the pool than from the loop",
  }),
  lingerMs: setting({
    env: 'LINGER_MS',
    default: 5_000,
    ...milliseconds(0, 60_000),
    meaning:
      'After an answer sent before the whole body arrived (413, 503), how long the rest of the upload is read and discarded before the connection closes, so the client reads the answer (RFC 9112 §9.6); also how long a connection ended at shutdown waits for its client to close its side before it is cut, so that none holds the exit',
  }),
  lingerBytes: setting({
    env: 'LINGER_BYTES',
    default: 64 * MIB,
    ...size(0),
    meaning: 'Most bytes of such an upload read and discarded before the connection closes',
  }),
  sortMaxLength: setting({ env: 'SORT_MAX_LENGTH', default: 1_000_000, ...integer(1), meaning: 'Most elements `/api/sort` takes; more gets 413' }),
  stringSplitMaxParts: setting({
    env: 'STRING_SPLIT_MAX_PARTS',
    default: 1_000_000,
    ...integer(1),
    meaning: 'Most parts `/api/stringSplit` makes; a string that splits into more gets 413',
  }),
  batchMaxOperations: setting({
    env: 'BATCH_MAX_OPERATIONS',
    default: 10_000,
    ...integer(1, 10_000_000),
    meaning: 'Most operations one `/api/batch` request may carry; more gets 413 (each is also within the body limit and the memory budget)',
  }),
  streamMaxLineBytes: setting({
    env: 'STREAM_MAX_LINE_BYTES',
    default: 64 * KIB,
    ...size(16, 16 * MIB),
    meaning:
      'Longest line of an `/api/stream` request; a longer one gets a 413 answer line and is skipped, never held whole. Lines are answered on the event loop: larger inputs belong in a single request or a batch, which answer large bodies in the worker threads',
  }),
  streamIdleTimeoutMs: setting({
    env: 'STREAM_IDLE_TIMEOUT_MS',
    default: 30_000,
    ...milliseconds(1),
    meaning:
      'A stream that neither sends a byte nor takes an answer for this long ends: with a 408 answer line when it stopped sending, by closing the connection when it stopped reading',
  }),
  streamTimeoutMs: setting({
    env: 'STREAM_TIMEOUT_MS',
    default: 3_600_000,
    ...milliseconds(1),
    meaning:
      'Longest an `/api/stream` request may run, in place of `REQUEST_TIMEOUT_MS`; then it ends with a 408 answer line after the last answered line, and the connection closes',
  }),
  maxDepth: setting({ env: 'MAX_DEPTH', default: 128, ...integer(1, 4096), meaning: 'Deepest nesting of `input` (a scalar is 0, `[]` is 1); deeper gets 413' }),
  numberTextLimit: setting({
    env: 'NUMBER_TEXT_LIMIT',
    default: 10_000,
    ...integer(1, 1_000_000),
    meaning: 'Longest number text (in characters) the parity operations take; longer gets 400',
  }),
  headersTimeoutMs: setting({ env: 'HEADERS_TIMEOUT_MS', default: 10_000, ...milliseconds(1), meaning: 'Time a client has to send the request headers' }),
  requestTimeoutMs: setting({
    env: 'REQUEST_TIMEOUT_MS',
    default: 30_000,
    ...milliseconds(1),
    meaning: 'Time a client has to send the whole request, body included',
  }),
  keepAliveTimeoutMs: setting({
    env: 'KEEP_ALIVE_TIMEOUT_MS',
    default: 72_000,
    ...milliseconds(1),
    meaning: 'How long an idle keep-alive connection stays open',
  }),
  drainDelayMs: setting({
    env: 'DRAIN_DELAY_MS',
    default: 5_000,
    ...milliseconds(0),
    meaning: 'On SIGTERM, how long `/readyz` answers 503 before the server stops accepting, so load balancers stop sending (SIGINT, Ctrl-C, skips it)',
  }),
  shutdownTimeoutMs: setting({
    env: 'SHUTDOWN_TIMEOUT_MS',
    default: 25_000,
    ...milliseconds(1),
    meaning: 'Hard deadline for the whole shutdown, drain delay included; past it the process exits 1',
  }),
  securityHeaders: setting({
    env: 'SECURITY_HEADERS',
    default: 'on',
    ...oneOf('on', 'off'),
    meaning: "Security headers: `nosniff` and a CSP that allows nothing on JSON responses; helmet's set, with a CSP the page works under, on the docs page",
  }),
  rateLimitMax: setting({
    env: 'RATE_LIMIT_MAX',
    default: 0,
    ...integer(0),
    meaning: 'Requests one client address may make per window (0: no limit); more get 429 with `Retry-After`. Counted per process',
  }),
  rateLimitWindowMs: setting({ env: 'RATE_LIMIT_WINDOW_MS', default: 60_000, ...milliseconds(1), meaning: 'The window `RATE_LIMIT_MAX` counts in' }),
  overloadTargetMs: setting<number | 'off'>({
    env: 'OVERLOAD_TARGET_MS',
    default: 50,
    ...or('off', milliseconds(1, 10_000)),
    meaning:
      'Overload control: while callers come and go on new connections and a queue (event loop, offload pool) has stood over this for 100 ms (or two waits in a row were over it by more than 100 ms), a request to an operation that would wait longer than this to start is refused at once, 503 with `Retry-After`; closed loops of kept-alive connections and probes never are. `off`: every request is queued',
  }),
  maxEventLoopDelayMs: setting({
    env: 'MAX_EVENT_LOOP_DELAY_MS',
    default: 0,
    ...milliseconds(0),
    meaning: 'Above this event-loop delay the service sheds load (0: never): 503 with `Retry-After` (probes excepted)',
  }),
  corsOrigins: setting<readonly string[] | 'off'>({
    env: 'CORS_ORIGINS',
    default: ['*'],
    ...or(
      'off',
      kind('`*`, or a comma-separated list of origins', (raw) => {
        const origins = raw.split(',').flatMap((origin) => (origin.trim() === '' ? [] : [origin.trim()]));
        return origins.length > 0 ? origins : undefined;
      }),
    ),
    meaning: 'Origins whose browser pages may call the API',
  }),
  legacyRoutes: setting({
    env: 'LEGACY_ROUTES',
    default: 'on',
    ...oneOf('on', 'off'),
    meaning: 'Serve the earlier revision at the root (`POST /sort`, `/is-odd`, `/is-even`, `/toString`); `off` answers 404',
  }),
  legacyDeprecationDate: setting<Date>({
    env: 'LEGACY_DEPRECATION_DATE',
    default: new Date('2026-11-22T00:00:00Z'),
    ...instant,
    meaning: 'When the legacy routes were deprecated: their `Deprecation` header (RFC 9745)',
  }),
  legacySunset: setting<Date | undefined>({
    env: 'LEGACY_SUNSET',
    default: undefined,
    ...instant,
    meaning: 'When the legacy routes go away: their `Sunset` header (RFC 8594); unset sends none',
  }),
} as const;

type Settings = typeof SETTINGS;
export type Config = { -readonly [K in keyof Settings]: Settings[K]['default'] };

export const DEFAULT_CONFIG: Readonly<Config> = Object.freeze(
  Object.fromEntries(Object.entries(SETTINGS).map(([key, definition]) => [key, definition.default])) as Config,
);

/** How many processes serve: `WORKERS`, with `auto` as one per CPU. */
export function workerCount(config: Pick<Config, 'workers'>): number {
  return config.workers === 'auto' ? availableParallelism() : config.workers;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads the configuration from environment variables; an unset or empty variable takes its
 * default. Throws `ConfigError` naming every bad variable and what it accepts.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const config: Record<string, unknown> = { ...DEFAULT_CONFIG };
  const problems: string[] = [];
  for (const [key, definition] of Object.entries(SETTINGS) as Array<[string, Setting<unknown>]>) {
    const raw = env[definition.env];
    if (raw === undefined || raw === '') continue;
    const value = definition.parse(raw.trim());
    if (value === undefined) problems.push(`${definition.env}=${JSON.stringify(raw)} is invalid: it accepts ${definition.accepts}`);
    else config[key] = value;
  }
  const sunset = config.legacySunset as Date | undefined;
  if (sunset !== undefined && sunset < (config.legacyDeprecationDate as Date)) {
    problems.push('LEGACY_SUNSET must not come before LEGACY_DEPRECATION_DATE');
  }
  if ((config.drainDelayMs as number) >= (config.shutdownTimeoutMs as number)) {
    problems.push('DRAIN_DELAY_MS must be shorter than SHUTDOWN_TIMEOUT_MS, which includes it');
  }
  if (config.adminPort !== 'off' && config.adminPort !== 0 && config.adminPort === config.port) {
    problems.push('ADMIN_PORT must differ from PORT: the probes and metrics leave the API port for it');
  }
  if ((config.headersTimeoutMs as number) > (config.requestTimeoutMs as number)) {
    problems.push('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS: the headers are part of the request');
  }
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  return config as Config;
}
