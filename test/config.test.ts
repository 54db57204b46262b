import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { detectMemoryLimit, processShare } from '../src/http/memory/memory-limit.js';
import { ConfigError, formatBytes, DEFAULT_CONFIG, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  test('with no variables set, every setting takes its default', () => {
    assert.deepEqual(loadConfig({}), DEFAULT_CONFIG);
    assert.equal(DEFAULT_CONFIG.port, 3000);
    assert.equal(DEFAULT_CONFIG.host, '127.0.0.1');
  });

  test('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      ADMIN_PORT: '9090',
      WORKERS: 'auto',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'pretty',
      LOG_FLUSH_MS: '0',
      LOG_BACKLOG_BYTES: '1GiB',
      DRAIN_DELAY_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '9000',
      SECURITY_HEADERS: 'off',
      RATE_LIMIT_MAX: '100',
      RATE_LIMIT_WINDOW_MS: '1000',
      MAX_EVENT_LOOP_DELAY_MS: '200',
      OVERLOAD_TARGET_MS: 'off',
      BODY_LIMIT: '1024',
      COMPRESS_MIN_BYTES: '2KiB',
      SORT_MAX_LENGTH: '10',
      MAX_DEPTH: '4',
      NUMBER_TEXT_LIMIT: '50',
      MEMORY_LIMIT: '1.5GiB',
      ADMISSION_WAIT_MS: '0',
      OFFLOAD_BODY_BYTES: '1MiB',
      POOL_THREADS: '3',
      POOL_THREAD_NICENESS: '0',
      LINGER_MS: '100',
      LINGER_BYTES: '512KiB',
      STRING_SPLIT_MAX_PARTS: '7',
      BATCH_MAX_OPERATIONS: '5',
      STREAM_MAX_LINE_BYTES: '1KiB',
      STREAM_IDLE_TIMEOUT_MS: '500',
      STREAM_TIMEOUT_MS: '60000',
      ACCESS_LOG: 'sample:100',
      SLOW_REQUEST_MS: '250',
      HEADERS_TIMEOUT_MS: '1000',
      REQUEST_TIMEOUT_MS: '2000',
      KEEP_ALIVE_TIMEOUT_MS: '3000',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      LEGACY_ROUTES: 'off',
      LEGACY_DEPRECATION_DATE: '2026-01-01',
      LEGACY_SUNSET: '2027-06-30T12:00:00+02:00',
    });
    assert.deepEqual(config, {
      port: 8080,
      host: '0.0.0.0',
      adminPort: 9090,
      workers: 'auto',
      logLevel: 'warn',
      logFormat: 'pretty',
      logFlushMs: 0,
      logBacklogBytes: 2 ** 30,
      drainDelayMs: 0,
      shutdownTimeoutMs: 9000,
      securityHeaders: 'off',
      rateLimitMax: 100,
      rateLimitWindowMs: 1000,
      maxEventLoopDelayMs: 200,
      overloadTargetMs: 'off',
      bodyLimit: 1024,
      compressMinBytes: 2048,
      sortMaxLength: 10,
      maxDepth: 4,
      numberTextLimit: 50,
      accessLog: { mode: 'sample', every: 100 },
      slowRequestMs: 250,
      memoryLimit: 1.5 * 2 ** 30,
      admissionWaitMs: 0,
      offloadBodyBytes: 2 ** 20,
      poolThreads: 3,
      poolThreadNiceness: 0,
      lingerMs: 100,
      lingerBytes: 512 * 1024,
      stringSplitMaxParts: 7,
      batchMaxOperations: 5,
      streamMaxLineBytes: 1024,
      streamIdleTimeoutMs: 500,
      streamTimeoutMs: 60_000,
      headersTimeoutMs: 1000,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 3000,
      corsOrigins: ['https://a.example', 'https://b.example'],
      legacyRoutes: 'off',
      legacyDeprecationDate: new Date('2026-01-01T00:00:00Z'),
      legacySunset: new Date('2027-06-30T10:00:00Z'),
    });
    assert.equal(loadConfig({ CORS_ORIGINS: 'off' }).corsOrigins, 'off');
    assert.equal(loadConfig({ ADMIN_PORT: 'off' }).adminPort, 'off');
    assert.equal(loadConfig({ PORT: '0', ADMIN_PORT: '0' }).adminPort, 0);
    for (const mode of ['all', 'errors', 'minimal'] as const) assert.deepEqual(loadConfig({ ACCESS_LOG: mode }).accessLog, { mode });
  });

  const BAD: Array<[Record<string, string>, string]> = [
    [{ PORT: '70000' }, 'PORT="70000" is invalid: it accepts an integer from 0 to 65535'],
    [{ POOL_THREAD_NICENESS: '20' }, 'POOL_THREAD_NICENESS="20" is invalid: it accepts an integer from 0 to 19'],
    [{ OVERLOAD_TARGET_MS: '0' }, 'OVERLOAD_TARGET_MS="0" is invalid: it accepts milliseconds, an integer from 1 to 10000, or `off`'],
    [{ OVERLOAD_TARGET_MS: 'auto' }, 'OVERLOAD_TARGET_MS="auto" is invalid: it accepts milliseconds, an integer from 1 to 10000, or `off`'],
    [{ HOST: '  ' }, 'HOST="  " is invalid: it accepts a host name or IP address'],
    [{ PORT: '3000abc' }, 'PORT="3000abc" is invalid: it accepts an integer from 0 to 65535'],
    [{ BODY_LIMIT: '-1' }, 'BODY_LIMIT="-1" is invalid: it accepts a number of bytes from 1 to 2147483647, or with a `KiB`/`MiB`/`GiB` suffix'],
    [{ BODY_LIMIT: '1.5' }, 'BODY_LIMIT="1.5" is invalid: it accepts a number of bytes from 1 to 2147483647, or with a `KiB`/`MiB`/`GiB` suffix'],
    [{ BODY_LIMIT: '0.3KiB' }, 'BODY_LIMIT="0.3KiB" is invalid: it accepts a number of bytes from 1 to 2147483647, or with a `KiB`/`MiB`/`GiB` suffix'],
    [{ BODY_LIMIT: '2GiB' }, 'BODY_LIMIT="2GiB" is invalid: it accepts a number of bytes from 1 to 2147483647, or with a `KiB`/`MiB`/`GiB` suffix'],
    [{ MAX_DEPTH: '0' }, 'MAX_DEPTH="0" is invalid: it accepts an integer from 1 to 4096'],
    [{ MEMORY_LIMIT: '100MiB' }, 'MEMORY_LIMIT="100MiB" is invalid: it accepts a number of bytes from 128 MiB, or with a `KiB`/`MiB`/`GiB` suffix, or `auto`'],
    [{ MEMORY_LIMIT: '1GB' }, 'MEMORY_LIMIT="1GB" is invalid: it accepts a number of bytes from 128 MiB, or with a `KiB`/`MiB`/`GiB` suffix, or `auto`'],
    [{ MEMORY_LIMIT: '-1' }, 'MEMORY_LIMIT="-1" is invalid: it accepts a number of bytes from 128 MiB, or with a `KiB`/`MiB`/`GiB` suffix, or `auto`'],
    [{ ADMISSION_WAIT_MS: '60001' }, 'ADMISSION_WAIT_MS="60001" is invalid: it accepts milliseconds, an integer from 0 to 60000'],
    [{ POOL_THREADS: '0' }, 'POOL_THREADS="0" is invalid: it accepts an integer from 1 to 64, or `auto`'],
    [{ ACCESS_LOG: 'some' }, 'ACCESS_LOG="some" is invalid: it accepts `all`, `errors`, `sample:N` (one request in N, N from 1 to 1000000), or `minimal`'],
    [
      { ACCESS_LOG: 'sample:0' },
      'ACCESS_LOG="sample:0" is invalid: it accepts `all`, `errors`, `sample:N` (one request in N, N from 1 to 1000000), or `minimal`',
    ],
    [{ SLOW_REQUEST_MS: '0' }, 'SLOW_REQUEST_MS="0" is invalid: it accepts milliseconds, an integer from 1'],
    [{ STRING_SPLIT_MAX_PARTS: '0' }, 'STRING_SPLIT_MAX_PARTS="0" is invalid: it accepts an integer from 1'],
    [{ LOG_FLUSH_MS: '20000' }, 'LOG_FLUSH_MS="20000" is invalid: it accepts milliseconds, an integer from 0 to 10000'],
    [
      { LOG_BACKLOG_BYTES: '1048575' },
      'LOG_BACKLOG_BYTES="1048575" is invalid: it accepts a number of bytes from 1 MiB to 1 GiB, or with a `KiB`/`MiB`/`GiB` suffix',
    ],
    [
      { LOG_BACKLOG_BYTES: '1025MiB' },
      'LOG_BACKLOG_BYTES="1025MiB" is invalid: it accepts a number of bytes from 1 MiB to 1 GiB, or with a `KiB`/`MiB`/`GiB` suffix',
    ],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud" is invalid: it accepts `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`'],
    [{ CORS_ORIGINS: ' , ' }, 'CORS_ORIGINS=" , " is invalid: it accepts `*`, or a comma-separated list of origins, or `off`'],
    [{ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }, 'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS: the headers are part of the request'],
    [{ ADMIN_PORT: 'on' }, 'ADMIN_PORT="on" is invalid: it accepts an integer from 0 to 65535 other than `PORT` (0 picks a free one), or `off`'],
    [{ PORT: '9090', ADMIN_PORT: '9090' }, 'ADMIN_PORT must differ from PORT: the probes and metrics leave the API port for it'],
    [{ ADMIN_PORT: '3000' }, 'ADMIN_PORT must differ from PORT: the probes and metrics leave the API port for it'],
    [{ WORKERS: '0' }, 'WORKERS="0" is invalid: it accepts an integer from 1 to 64, or `auto`'],
    [{ DRAIN_DELAY_MS: '30000' }, 'DRAIN_DELAY_MS must be shorter than SHUTDOWN_TIMEOUT_MS, which includes it'],
    [{ LEGACY_ROUTES: 'no' }, 'LEGACY_ROUTES="no" is invalid: it accepts `on` or `off`'],
    [{ LEGACY_SUNSET: '2027-02-30' }, 'LEGACY_SUNSET="2027-02-30" is invalid: it accepts an ISO 8601 date, or date and time with a zone'],
    [{ LEGACY_SUNSET: '2027-01-01T00:00' }, 'LEGACY_SUNSET="2027-01-01T00:00" is invalid: it accepts an ISO 8601 date, or date and time with a zone'],
    [{ LEGACY_DEPRECATION_DATE: 'yesterday' }, 'LEGACY_DEPRECATION_DATE="yesterday" is invalid: it accepts an ISO 8601 date, or date and time with a zone'],
    [{ LEGACY_SUNSET: '2020-01-01' }, 'LEGACY_SUNSET must not come before LEGACY_DEPRECATION_DATE'],
  ];
  for (const [env, message] of BAD) {
    test(`${JSON.stringify(env)} stops the start with: ${message}`, () => {
      assert.throws(() => loadConfig(env), new ConfigError(message));
    });
  }

  test('LOG_BACKLOG_BYTES takes its lowest value, 1 MiB, as bytes or with a suffix', () => {
    assert.equal(loadConfig({ LOG_BACKLOG_BYTES: '1MiB' }).logBacklogBytes, 2 ** 20);
    // Every byte-sized setting takes the same forms (docs/operations.md): BODY_LIMIT too.
    assert.equal(loadConfig({ BODY_LIMIT: '1MiB' }).bodyLimit, 2 ** 20);
    assert.equal(loadConfig({ BODY_LIMIT: '1.5 KiB' }).bodyLimit, 1536);
    assert.equal(loadConfig({ BODY_LIMIT: '2048' }).bodyLimit, 2048);
    assert.equal(loadConfig({ LOG_BACKLOG_BYTES: '1048576' }).logBacklogBytes, 2 ** 20);
  });

  test('every bad variable is named at once', () => {
    assert.throws(
      () => loadConfig({ PORT: 'x', MAX_DEPTH: 'y' }),
      (error: unknown) => error instanceof ConfigError && error.message.split('\n').length === 2,
    );
  });
});

describe('MEMORY_LIMIT=auto', () => {
  const GIB = 2 ** 30;
  test('the container limit (process.constrainedMemory) when there is one', () => {
    assert.deepEqual(detectMemoryLimit(GIB, undefined, 24 * GIB), { bytes: GIB, source: 'cgroup' });
  });
  test('the cgroup file when the runtime gives no limit', () => {
    assert.deepEqual(detectMemoryLimit(undefined, 2 * GIB, 24 * GIB), { bytes: 2 * GIB, source: 'cgroup' });
    assert.deepEqual(detectMemoryLimit(0, 2 * GIB, 24 * GIB), { bytes: 2 * GIB, source: 'cgroup' });
  });
  test('the machine’s memory when no limit is set (2^64 from constrainedMemory, or a limit above the machine)', () => {
    assert.deepEqual(detectMemoryLimit(2 ** 64, undefined, 24 * GIB), { bytes: 24 * GIB, source: 'machine' });
    assert.deepEqual(detectMemoryLimit(2 ** 64, 2 ** 63, 24 * GIB), { bytes: 24 * GIB, source: 'machine' });
  });
  test('with WORKERS > 1 each worker gets an equal share of what the primary leaves', () => {
    assert.equal(processShare(768 * 2 ** 20, 1), 768 * 2 ** 20);
    assert.equal(processShare(768 * 2 ** 20, 2), 352 * 2 ** 20);
  });
  test('sizes are shown in the largest unit they reach, to one decimal', () => {
    assert.equal(formatBytes(805306368), '768 MiB');
    assert.equal(formatBytes(1.5 * GIB), '1.5 GiB');
    assert.equal(formatBytes(24683656 * 1024), '23.5 GiB');
    assert.equal(formatBytes(123), '123 bytes');
  });
});

test('which Node.js versions engines accepts', async () => {
  const { unsupportedNode } = await import('../src/node-version.js');
  for (const version of ['v22.12.0', 'v22.23.3', 'v24.11.0', 'v24.21.0', 'v26.0.0', 'v26.10.0']) assert.equal(unsupportedNode(version), undefined, version);
  for (const version of ['v20.20.2', 'v22.11.9', 'v23.1.0', 'v24.10.5', 'v25.0.0', 'v27.0.0', 'v18.19.0'])
    assert.match(unsupportedNode(version) ?? '', new RegExp(`this is ${version.replaceAll('.', '\\.')}\\.`), version);
});
