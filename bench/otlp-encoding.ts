/**
 * The OTLP protobuf encoding of spans, the service's (src/http/observability/otlp-protobuf.ts)
 * against OpenTelemetry's ProtobufTraceSerializer and JsonTraceSerializer, in one process: 512 spans
 * shaped as the service's (a SERVER span with its HTTP attributes), each encoder in alternating
 * passes of 200 requests, in µs a span and bytes a span. First checks that the two protobuf
 * encodings are the same bytes. Runs on the Node.js that runs it; no build needed.
 *
 *   npx tsx bench/otlp-encoding.ts
 */
import { SpanKind } from '@opentelemetry/api';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { encodeTraceRequest } from '../src/http/observability/otlp-protobuf.js';

const spans: ReadableSpan[] = [];
const provider = new TracerProvider({
  spanProcessors: [{ onStart() {}, onEnd: (span: ReadableSpan) => void spans.push(span), forceFlush: async () => {}, shutdown: async () => {} }],
});
const tracer = provider.getTracer('json-utility-service', '1.0.0');
for (let i = 0; i < 512; i++) {
  const span = tracer.startSpan('POST /api/isEven', { kind: SpanKind.SERVER });
  span.setAttributes({
    'http.request.method': 'POST',
    'http.route': '/api/isEven',
    'url.path': '/api/isEven',
    'url.scheme': 'http',
    'network.protocol.version': '1.1',
    'client.address': '127.0.0.1',
    'user_agent.original': 'wrk',
    'json_utility.operation': 'isEven',
    'http.response.status_code': 200,
  });
  span.end();
}

const theirs = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array());
if (!theirs.equals(Buffer.from(encodeTraceRequest(spans)))) throw new Error('the two protobuf encodings differ');

const encoders: ReadonlyArray<[string, (spans: ReadableSpan[]) => Uint8Array | undefined]> = [
  ["OpenTelemetry's protobuf", (s) => ProtobufTraceSerializer.serializeRequest(s)],
  ["the service's protobuf", encodeTraceRequest],
  ["OpenTelemetry's JSON", (s) => JsonTraceSerializer.serializeRequest(s)],
];
const PASSES = 3;
const REQUESTS = 200;
for (let pass = 1; pass <= PASSES; pass++) {
  for (const [name, encode] of encoders) {
    let bytes = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < REQUESTS; i++) bytes += encode(spans)?.length ?? 0;
    const micros = Number(process.hrtime.bigint() - started) / 1e3 / (REQUESTS * spans.length);
    process.stdout.write(`pass ${pass} ${name}: ${micros.toFixed(2)} µs a span, ${Math.round(bytes / REQUESTS / spans.length)} bytes a span\n`);
  }
}
