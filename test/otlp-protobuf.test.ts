import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type AttributeValue, type Link } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { encodeTraceRequest } from '../src/http/observability/otlp-protobuf.js';
import { protobufExportWanted } from '../src/http/observability/otlp-exporter.js';

// The service's OTLP protobuf encoding writes the same bytes as OpenTelemetry's own serializer,
// for any spans the SDK can make: random names, attributes of every type, events, links, status,
// trace state, parents, and more than one scope and resource in a request.

const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ minLength: 120, maxLength: 300 }));
const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString('hex'));
const scalar: fc.Arbitrary<AttributeValue> = fc.oneof(
  text,
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: false }),
  fc.maxSafeInteger(),
  fc.constantFrom(2 ** 40, -(2 ** 40), 2 ** 53 + 2, -1),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 4 }),
  fc.array(fc.integer(), { maxLength: 4 }),
  fc.array(fc.boolean(), { maxLength: 3 }),
);
const attributes: fc.Arbitrary<Attributes> = fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), scalar, { maxKeys: 8 });
const spanContext = fc.record({ traceId: hex(16), spanId: hex(8), traceFlags: fc.constantFrom(TraceFlags.SAMPLED, TraceFlags.NONE), isRemote: fc.boolean() });
const spanShape = fc.record({
  name: text,
  kind: fc.constantFrom(SpanKind.INTERNAL, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.PRODUCER, SpanKind.CONSUMER),
  attributes,
  later: attributes,
  parent: fc.option(spanContext, { nil: undefined }),
  links: fc.array(fc.record({ context: spanContext, attributes: fc.option(attributes, { nil: undefined }) }), { maxLength: 2 }),
  events: fc.array(fc.record({ name: text, attributes: fc.option(attributes, { nil: undefined }) }), { maxLength: 2 }),
  status: fc.constantFrom<[SpanStatusCode, string | undefined]>(
    [SpanStatusCode.UNSET, undefined],
    [SpanStatusCode.OK, undefined],
    [SpanStatusCode.ERROR, 'it failed'],
    [SpanStatusCode.ERROR, 'é'],
  ),
  scope: fc.constantFrom(0, 1),
  start: fc.record({ seconds: fc.integer({ min: 0, max: 4_000_000_000 }), nanos: fc.integer({ min: 0, max: 999_999_999 }) }),
});

type SpanShape = typeof spanShape extends fc.Arbitrary<infer T> ? T : never;

/** Ends spans of the given shapes with the SDK itself and returns them as an exporter would get them. */
async function ended(shapes: readonly SpanShape[], resources: number): Promise<ReadableSpan[]> {
  const out: ReadableSpan[] = [];
  const processor = { onStart() {}, onEnd: (span: ReadableSpan) => void out.push(span), forceFlush: async () => {}, shutdown: async () => {} };
  const providers = Array.from(
    { length: resources },
    (_, i) => new TracerProvider({ spanProcessors: [processor], ...(i === 0 ? {} : { resource: undefined }) }),
  );
  shapes.forEach((shape, i) => {
    const provider = providers[i % resources] as TracerProvider;
    const tracer = provider.getTracer(shape.scope === 0 ? 'json-utility-service' : 'another', shape.scope === 0 ? '1.0.0' : undefined);
    const links: Link[] = shape.links.map((link) => ({ context: link.context, ...(link.attributes ? { attributes: link.attributes } : {}) }));
    const startTime: [number, number] = [shape.start.seconds, shape.start.nanos];
    const span = tracer.startSpan(shape.name, { kind: shape.kind, attributes: shape.attributes, links, startTime });
    if (shape.parent !== undefined) (span as unknown as { parentSpanContext: unknown }).parentSpanContext = shape.parent;
    span.setAttributes(shape.later);
    for (const event of shape.events) span.addEvent(event.name, event.attributes, [shape.start.seconds + 1, shape.start.nanos]);
    span.setStatus({ code: shape.status[0], ...(shape.status[1] === undefined ? {} : { message: shape.status[1] }) });
    span.end([shape.start.seconds + 2, 5]);
  });
  return out;
}

test("the same bytes as OpenTelemetry's ProtobufTraceSerializer", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(spanShape, { maxLength: 12 }), fc.integer({ min: 1, max: 2 }), async (shapes, resources) => {
      const spans = await ended(shapes, resources);
      const theirs = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array());
      const ours = Buffer.from(encodeTraceRequest(spans));
      assert.ok(theirs.equals(ours), `${theirs.toString('hex')}\n${ours.toString('hex')}`);
    }),
    { numRuns: 300 },
  );
});

test('a request past the first buffer (long strings, many spans) grows it and stays the same bytes', async () => {
  const shape = fc.sample(spanShape, { numRuns: 1, seed: 7 })[0] as SpanShape;
  const spans = await ended(
    Array.from({ length: 300 }, (_, i) => ({ ...shape, name: `span ${i} ${'x'.repeat(i * 7)}`, attributes: { big: 'é'.repeat(3000), n: i } })),
    1,
  );
  const ours = Buffer.from(encodeTraceRequest(spans));
  assert.ok(ours.length > 300 * 512);
  assert.ok(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array()).equals(ours));
});

test('which settings get the protobuf exporter; any other is left to NodeSDK', () => {
  assert.equal(protobufExportWanted({}), true);
  assert.equal(protobufExportWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }), true);
  assert.equal(protobufExportWanted({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), false);
  assert.equal(protobufExportWanted({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), false);
  assert.equal(protobufExportWanted({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }), true);
  assert.equal(protobufExportWanted({ OTEL_TRACES_EXPORTER: 'console' }), false);
  assert.equal(protobufExportWanted({ OTEL_TRACES_EXPORTER: 'otlp,console' }), false);
});
