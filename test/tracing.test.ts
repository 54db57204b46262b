import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { before, describe, test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { ROOT_CONTEXT, context, createContextKey } from '@opentelemetry/api';
import { NoContext } from '../src/http/observability/tracing.js';
import { tracingRequested } from '../src/http/observability/tracing-requested.js';
import { START_ARGS, startServer } from './process.js';
import { silentServer } from './silent-server.js';

// OpenTelemetry traces (docs/operations.md, Traces): the built service, started with the standard
// OTEL_* environment, exports its spans over OTLP/HTTP to a receiver in this test.

const ROOT = new URL('..', import.meta.url).pathname;
const ENTRY = START_ARGS;
const REPORT_IMPORTS = ['--import', `${ROOT}test/fixtures/report-opentelemetry-imports.mjs`, ...ENTRY];

interface Attribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean };
}
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Attribute[];
  status?: { code?: number; message?: string };
}

/** An OTLP/HTTP receiver (JSON encoding) on loopback: every span it was sent, and its resources' attributes. */
async function receiver(t: TestContext): Promise<{ url: string; spans: ExportedSpan[]; resources: Attribute[][] }> {
  const spans: ExportedSpan[] = [];
  const resources: Attribute[][] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      assert.equal(request.url, '/v1/traces');
      assert.equal(request.headers['content-type'], 'application/json');
      const message = JSON.parse(body) as {
        resourceSpans: Array<{ resource: { attributes: Attribute[] }; scopeSpans: Array<{ spans: ExportedSpan[] }> }>;
      };
      for (const resourceSpans of message.resourceSpans) {
        resources.push(resourceSpans.resource.attributes);
        for (const scope of resourceSpans.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, resources };
}

const attributesOf = (attributes: Attribute[]): Record<string, string | number | boolean | undefined> =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, value.stringValue ?? (value.intValue === undefined ? value.boolValue : Number(value.intValue))]));

/** The lines of a log that came from OpenTelemetry's SDK. */
const sdkLines = (output: string): Array<{ level: number; msg: string }> =>
  output
    .split('\n')
    .filter((line) => line.includes('"source":"opentelemetry"'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close', ...headers }, body });

before(async () => {
  await promisify(execFile)('npm', ['run', 'build'], { cwd: ROOT });
});

describe('OpenTelemetry traces', () => {
  test('a span per request, continuing the incoming traceparent, marked as the HTTP conventions say, flushed at shutdown', async (t) => {
    const collector = await receiver(t);
    const server = await startServer(
      t,
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // Nothing is exported on a timer during the test: what arrives is what shutdown flushed.
        OTEL_BSP_SCHEDULE_DELAY: '600000',
        ACCESS_LOG: 'all',
        LOG_LEVEL: 'info',
        DRAIN_DELAY_MS: '1000',
      },
      REPORT_IMPORTS,
    );
    assert.match(server.errors(), /tracing module loaded: .*\/observability\/tracing\.js/, 'the check below has teeth');
    assert.match(server.errors(), /tracing module loaded: .*\/@opentelemetry\/sdk-node\//);

    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
    assert.equal((await post(`${server.base}/api/sort`, '{"input":[2,1]}', { traceparent, tracestate: 'vendor=1' })).status, 200);
    assert.equal((await post(`${server.base}/api/isEven`, '{"input":2.5}')).status, 400);
    const batch = '{"operations":[{"operation":"isEven","input":4},{"operation":"isOdd","input":"x"},{"operation":"sort","input":[1]}]}';
    assert.equal((await post(`${server.base}/api/batch`, batch)).status, 200);
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A new stream during the drain: 503, the one 5xx the service answers on purpose.
    const refused = await fetch(`${server.base}/api/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', connection: 'close' },
      body: '{"operation":"isEven","input":1}\n',
    });
    assert.equal(refused.status, 503);
    assert.equal(await server.exited, 0, server.errors());

    const byName = (name: string): ExportedSpan => {
      const found = collector.spans.find((span) => span.name === name);
      assert.ok(found !== undefined, `${name} in ${collector.spans.map((span) => span.name).join(', ')}`);
      return found;
    };
    const sort = byName('POST /api/sort');
    assert.equal(sort.traceId, TRACE_ID);
    assert.equal(sort.parentSpanId, PARENT_ID);
    assert.equal(sort.kind, 2, 'SERVER');
    assert.deepEqual(sort.status?.code ?? 0, 0, 'a 200 leaves the status unset');
    const sortAttributes = attributesOf(sort.attributes);
    assert.deepEqual(
      {
        method: sortAttributes['http.request.method'],
        route: sortAttributes['http.route'],
        path: sortAttributes['url.path'],
        status: sortAttributes['http.response.status_code'],
        operation: sortAttributes['json_utility.operation'],
      },
      { method: 'POST', route: '/api/sort', path: '/api/sort', status: 200, operation: 'sort' },
    );

    const bad = byName('POST /api/isEven');
    assert.notEqual(bad.traceId, TRACE_ID, 'no traceparent: a new trace');
    assert.equal(bad.parentSpanId ?? '', '');
    assert.equal(attributesOf(bad.attributes)['http.response.status_code'], 400);
    assert.equal(bad.status?.code ?? 0, 0, "a 4xx is the client's: the server span's status stays unset");

    const many = attributesOf(byName('POST /api/batch').attributes);
    assert.deepEqual([many['json_utility.operation'], many['json_utility.operations'], many['json_utility.problems']], ['batch', 3, 1]);
    assert.equal(collector.spans.filter((span) => span.traceId === TRACE_ID).length, 1, 'one span for the request, none per hook');

    const stream = byName('POST /api/stream');
    assert.equal(stream.status?.code, 2, 'a 5xx is an error');
    assert.equal(attributesOf(stream.attributes)['error.type'], '503');
    assert.equal(attributesOf(collector.resources[0] ?? [])['service.name'], 'json-utility-service');

    // The log lines of a traced request carry its trace.
    const line = server
      .output()
      .split('\n')
      .find((text) => text.includes('"url":"/api/sort"'));
    assert.ok(line !== undefined, server.output());
    const logged = JSON.parse(line) as { trace_id?: string; span_id?: string; requestId?: string };
    assert.deepEqual([logged.trace_id, logged.span_id], [TRACE_ID, sort.spanId]);
    assert.ok(logged.requestId);
  });

  test('a client that goes away before its answer: the span ends as aborted; a sampled-out request exports nothing', async (t) => {
    const collector = await receiver(t);
    const server = await startServer(
      t,
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '600000', DRAIN_DELAY_MS: '0' },
      ENTRY,
    );
    // Half of a declared body, then the socket closes: the answer is never sent.
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /api/sort HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"input":[');
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A caller's traceparent that says "not sampled" is followed: no span for that request.
    const unsampled = `00-${TRACE_ID}-${PARENT_ID}-00`;
    assert.equal((await post(`${server.base}/api/isOdd`, '{"input":3}', { traceparent: unsampled })).status, 200);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.errors());
    assert.deepEqual(
      collector.spans.map((span) => span.name),
      ['POST /api/sort'],
    );
    const aborted = collector.spans[0] as ExportedSpan;
    assert.equal(aborted.status?.code, 2);
    assert.equal(aborted.status?.message, 'the client went away before the answer was sent');
    const attributes = attributesOf(aborted.attributes);
    assert.equal(attributes['error.type'], 'aborted');
    assert.equal(attributes['http.response.status_code'], undefined);
    assert.equal(attributes['json_utility.operation'], 'sort');
  });

  test("by default the spans go as OTLP protobuf, by OpenTelemetry's own exporter, to the collector", async (t) => {
    const bodies: Array<{ url: string | undefined; type: string | undefined; body: Buffer }> = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push({ url: request.url, type: request.headers['content-type'], body: Buffer.concat(chunks) });
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    t.after(() => collector.close());
    const url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const server = await startServer(t, { OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_BSP_SCHEDULE_DELAY: '600000', DRAIN_DELAY_MS: '0' }, ENTRY);
    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
    assert.equal((await post(`${server.base}/api/isEven`, '{"input":4}', { traceparent })).status, 200);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.errors());
    assert.equal(bodies.length, 1);
    const { url: path, type, body } = bodies[0] as { url: string; type: string; body: Buffer };
    assert.equal(path, '/v1/traces');
    assert.equal(type, 'application/x-protobuf');
    for (const expected of [Buffer.from(TRACE_ID, 'hex'), Buffer.from(PARENT_ID, 'hex'), Buffer.from('POST /api/isEven'), Buffer.from('json-utility-service')])
      assert.ok(body.includes(expected), `${expected.toString('hex')} in ${body.toString('hex')}`);
  });

  test("without the OpenTelemetry environment neither the SDK nor the service's tracing is loaded", async (t) => {
    const server = await startServer(t, {}, REPORT_IMPORTS);
    assert.equal((await post(`${server.base}/api/isOdd`, '{"input":3}')).status, 200);
    server.child.kill('SIGINT');
    assert.equal(await server.exited, 0);
    // prom-client looks for @opentelemetry/api (for exemplars) whenever it is installed; the SDK, its
    // exporters and the service's tracing stay unloaded.
    const loaded = server.errors().match(/tracing module loaded: \S+/g) ?? [];
    assert.deepEqual(
      loaded.filter((line) => !line.includes('/@opentelemetry/api/')),
      [],
    );
  });

  test('a collector that never answers holds the exit for 3 s at most (the flush deadline), then the process exits 0', async (t) => {
    const silent = await silentServer(t);
    const server = await startServer(t, { OTEL_EXPORTER_OTLP_ENDPOINT: silent, OTEL_BSP_SCHEDULE_DELAY: '600000', DRAIN_DELAY_MS: '0' }, ENTRY);
    assert.equal((await post(`${server.base}/api/isOdd`, '{"input":3}')).status, 200);
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.errors());
    const took = Date.now() - signalled;
    assert.ok(took >= 2_500 && took < 6_000, `${took} ms`);
  });

  test("a bad OpenTelemetry setting is a line of the service's JSON log, and the service serves anyway", async (t) => {
    const server = await startServer(t, { OTEL_TRACES_EXPORTER: 'bogus' }, ENTRY);
    assert.equal((await post(`${server.base}/api/isOdd`, '{"input":3}')).status, 200);
    server.child.kill('SIGINT');
    assert.equal(await server.exited, 0);
    const said = sdkLines(server.output());
    assert.ok(
      said.some((line) => line.level === 40 && /Unrecognized OTEL_TRACES_EXPORTER value: bogus/.test(line.msg)),
      server.output(),
    );
    assert.equal(server.errors().trim(), '', 'nothing on standard error');
  });

  test('a collector that refuses connections: its failures are warn lines of the log, at most 10 a minute, with no stack trace', async (t) => {
    // A port nothing listens on: every export is refused.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const server = await startServer(
      t,
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        // An export gives up at once instead of retrying for its 10 s: each of the 30 fails within the test.
        OTEL_EXPORTER_OTLP_TIMEOUT: '200',
        OTEL_BSP_SCHEDULE_DELAY: '20',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '1',
        DRAIN_DELAY_MS: '0',
      },
      ENTRY,
    );
    for (let i = 0; i < 30; i++) assert.equal((await post(`${server.base}/api/isOdd`, '{"input":3}')).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    server.child.kill('SIGINT');
    assert.equal(await server.exited, 0);
    const said = sdkLines(server.output());
    assert.ok(said.length >= 1, server.output());
    assert.ok(said.length <= 10, `${said.length} lines`);
    for (const line of said) assert.doesNotMatch(line.msg, /\n\s+at /, 'no stack trace');
    assert.ok(
      said.some((line) => line.level === 40 && /could not export spans: .*ECONNREFUSED/.test(line.msg)),
      server.output(),
    );
    assert.doesNotMatch(server.errors(), /ECONNREFUSED|\n\s+at /);
  });

  test('which variables switch tracing on', () => {
    assert.equal(tracingRequested({}), false);
    assert.equal(tracingRequested({ OTEL_SERVICE_NAME: 'x' }), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true);
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' }), true);
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), false);
    assert.equal(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), false);
  });
});

test('the context manager the SDK is given carries no context: every function runs under the root, as with none', () => {
  const manager = new NoContext();
  assert.equal(context.setGlobalContextManager(manager), true);
  try {
    const carried = ROOT_CONTEXT.setValue(createContextKey('a request'), 1);
    assert.notEqual(carried, ROOT_CONTEXT);
    assert.equal(
      context.with(carried, () => context.active()),
      ROOT_CONTEXT,
    );
    const bound = context.bind(carried, () => context.active());
    assert.equal(bound(), ROOT_CONTEXT);
    assert.equal(
      context.with(carried, (a: number, b: number) => a + b, undefined, 2, 3),
      5,
    );
  } finally {
    context.disable();
  }
});
