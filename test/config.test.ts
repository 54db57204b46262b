import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, DEFAULT_CONFIG, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  test('with no variables set, every setting takes its default', () => {
    assert.deepEqual(loadConfig({}), DEFAULT_CONFIG);
    assert.equal(DEFAULT_CONFIG.port, 3000);
    assert.equal(DEFAULT_CONFIG.host, '127.0.0.1');
  });

  test('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080', HOST: '0.0.0.0', WORKERS: 'auto', LOG_LEVEL: 'warn', LOG_FORMAT: 'pretty', LOG_FLUSH_MS: '0', DRAIN_DELAY_MS: '0', SHUTDOWN_TIMEOUT_MS: '9000',
      SECURITY_HEADERS: 'off', RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '1000', MAX_EVENT_LOOP_DELAY_MS: '200', BODY_LIMIT: '1024', SORT_MAX_LENGTH: '10', MAX_DEPTH: '4',
      NUMBER_TEXT_LIMIT: '50', HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000', KEEP_ALIVE_TIMEOUT_MS: '3000',
      CORS_ORIGINS: 'https://a.example, https://b.example', LEGACY_ROUTES: 'off', LEGACY_DEPRECATION_DATE: '2026-01-01',
      LEGACY_SUNSET: '2027-06-30T12:00:00+02:00',
    });
    assert.deepEqual(config, {
      port: 8080, host: '0.0.0.0', workers: 'auto', logLevel: 'warn', logFormat: 'pretty', logFlushMs: 0, drainDelayMs: 0, shutdownTimeoutMs: 9000,
      securityHeaders: 'off', rateLimitMax: 100, rateLimitWindowMs: 1000, maxEventLoopDelayMs: 200, bodyLimit: 1024, sortMaxLength: 10, maxDepth: 4, numberTextLimit: 50,
      headersTimeoutMs: 1000, requestTimeoutMs: 2000, keepAliveTimeoutMs: 3000, corsOrigins: ['https://a.example', 'https://b.example'],
      legacyRoutes: 'off', legacyDeprecationDate: new Date('2026-01-01T00:00:00Z'), legacySunset: new Date('2027-06-30T10:00:00Z'),
    });
    assert.equal(loadConfig({ CORS_ORIGINS: 'off' }).corsOrigins, 'off');
  });

  const BAD: Array<[Record<string, string>, string]> = [
    [{ PORT: '70000' }, 'PORT="70000" is invalid: it accepts an integer from 0 to 65535'],
    [{ PORT: '3000abc' }, 'PORT="3000abc" is invalid: it accepts an integer from 0 to 65535'],
    [{ BODY_LIMIT: '-1' }, 'BODY_LIMIT="-1" is invalid: it accepts a number of bytes from 1'],
    [{ BODY_LIMIT: '1.5' }, 'BODY_LIMIT="1.5" is invalid: it accepts a number of bytes from 1'],
    [{ MAX_DEPTH: '0' }, 'MAX_DEPTH="0" is invalid: it accepts an integer from 1 to 4096'],
    [{ LOG_FLUSH_MS: '20000' }, 'LOG_FLUSH_MS="20000" is invalid: it accepts a number of milliseconds from 0 to 10000'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud" is invalid: it accepts fatal, error, warn, info, debug, trace or silent'],
    [{ CORS_ORIGINS: ' , ' }, 'CORS_ORIGINS=" , " is invalid: it accepts `*`, `off`, or a comma-separated list of origins'],
    [{ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' }, 'HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS: the headers are part of the request'],
    [{ WORKERS: '0' }, 'WORKERS="0" is invalid: it accepts an integer from 1 to 64, or `auto` (one per CPU)'],
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

  test('every bad variable is named at once', () => {
    assert.throws(() => loadConfig({ PORT: 'x', MAX_DEPTH: 'y' }), (error: unknown) => error instanceof ConfigError && error.message.split('\n').length === 2);
  });
});
