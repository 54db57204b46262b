/**
 * OTLP's ExportTraceServiceRequest in protobuf's binary encoding, from the SDK's ended spans: the
 * same bytes as @opentelemetry/otlp-transformer's ProtobufTraceSerializer (test/otlp-protobuf.test.ts
 * compares them on random spans), written with Node's native string and hex writes instead of a
 * loop over each character, and in one pass instead of a size estimate and a write. Measured in
 * one process against the library's (docs/performance.md, Tracing): why it exists.
 *
 * Field numbers and wire types: opentelemetry-proto's trace.proto and common.proto.
 */

import { FIXED32, FIXED64, LENGTH_DELIMITED, VARINT, Writer } from './protobuf-writer.js';

type HrTime = [number, number];
type AttributeValue = unknown;
type Attributes = Record<string, AttributeValue>;

interface SpanContextLike {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { serialize(): string };
}
interface ScopeLike {
  name: string;
  version?: string;
  schemaUrl?: string;
  attributes?: Attributes;
  droppedAttributesCount?: number;
}
interface ResourceLike {
  attributes?: Attributes;
  schemaUrl?: string;
}
/** What the encoding reads of the SDK's ReadableSpan. */
export interface EndedSpan {
  name: string;
  kind: number;
  spanContext(): SpanContextLike;
  parentSpanContext?: SpanContextLike;
  startTime: HrTime;
  endTime: HrTime;
  status: { code: number; message?: string };
  attributes: Attributes;
  links: ReadonlyArray<{ context: SpanContextLike; attributes?: Attributes; droppedAttributesCount?: number }>;
  events: ReadonlyArray<{ name: string; time: HrTime; attributes?: Attributes; droppedAttributesCount?: number }>;
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
  resource: ResourceLike;
  instrumentationScope: ScopeLike;
}

/** Nanoseconds since the epoch as fixed64, from HrTime's seconds and nanoseconds, exactly (no float product). */
function time(writer: Writer, [seconds, nanos]: HrTime): void {
  const fromLow = (seconds & 0xffff) * 1e9;
  const fromHigh = ((seconds / 65536) >>> 0) * 1e9;
  const low = (fromLow >>> 0) + (((fromHigh & 0xffff) * 65536) >>> 0) + nanos;
  const high = Math.floor(fromLow / 4294967296) + ((fromHigh / 65536) >>> 0) + Math.floor(low / 4294967296);
  writer.fixed64(low >>> 0, high >>> 0);
}

function attributes(writer: Writer, values: Attributes, field: number): void {
  for (const key in values) {
    if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
    writer.tag(field, LENGTH_DELIMITED);
    const keyValue = writer.open();
    writer.tag(1, LENGTH_DELIMITED);
    writer.string(key);
    writer.tag(2, LENGTH_DELIMITED);
    const value = writer.open();
    anyValue(writer, values[key]);
    writer.close(value);
    writer.close(keyValue);
  }
}

function anyValue(writer: Writer, value: AttributeValue): void {
  if (typeof value === 'string') {
    writer.tag(1, LENGTH_DELIMITED);
    writer.string(value);
  } else if (typeof value === 'boolean') {
    writer.tag(2, VARINT);
    writer.varint(value ? 1 : 0);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
      writer.tag(3, VARINT);
      writer.varint(value);
    } else {
      writer.tag(4, FIXED64);
      writer.double(value);
    }
  } else if (value instanceof Uint8Array) {
    writer.tag(7, LENGTH_DELIMITED);
    writer.bytes(value);
  } else if (Array.isArray(value)) {
    writer.tag(5, LENGTH_DELIMITED);
    const array = writer.open();
    for (const item of value as unknown[]) {
      writer.tag(1, LENGTH_DELIMITED);
      const element = writer.open();
      anyValue(writer, item);
      writer.close(element);
    }
    writer.close(array);
  } else if (typeof value === 'object' && value !== null) {
    writer.tag(6, LENGTH_DELIMITED);
    const list = writer.open();
    attributes(writer, value as Attributes, 1);
    writer.close(list);
  }
}

// Span.flags: the W3C trace flags, and whether the parent (or link) context was remote.
function flags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | 0x100 | (isRemote ? 0x200 : 0);
}

function status(writer: Writer, { code, message }: EndedSpan['status']): void {
  const at = writer.open();
  if (message) {
    writer.tag(2, LENGTH_DELIMITED);
    writer.string(message);
  }
  writer.tag(3, VARINT);
  writer.varint(code);
  writer.close(at);
}

function span(writer: Writer, ended: EndedSpan): void {
  const at = writer.open();
  const context = ended.spanContext();
  writer.tag(1, LENGTH_DELIMITED);
  writer.hex(context.traceId);
  writer.tag(2, LENGTH_DELIMITED);
  writer.hex(context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) {
    writer.tag(3, LENGTH_DELIMITED);
    writer.string(traceState);
  }
  const parent = ended.parentSpanContext;
  if (parent?.spanId) {
    writer.tag(4, LENGTH_DELIMITED);
    writer.hex(parent.spanId);
  }
  writer.tag(5, LENGTH_DELIMITED);
  writer.string(ended.name);
  // The API's SpanKind counts from INTERNAL = 0; protobuf's from UNSPECIFIED = 0.
  const kind = ended.kind == null ? 0 : ended.kind + 1;
  if (kind !== 0) {
    writer.tag(6, VARINT);
    writer.varint(kind);
  }
  writer.tag(7, FIXED64);
  time(writer, ended.startTime);
  writer.tag(8, FIXED64);
  time(writer, ended.endTime);
  if (ended.attributes) attributes(writer, ended.attributes, 9);
  writer.tag(10, VARINT);
  writer.varint(ended.droppedAttributesCount);
  for (const event of ended.events) {
    writer.tag(11, LENGTH_DELIMITED);
    const eventAt = writer.open();
    writer.tag(1, FIXED64);
    time(writer, event.time);
    writer.tag(2, LENGTH_DELIMITED);
    writer.string(event.name);
    if (event.attributes) attributes(writer, event.attributes, 3);
    writer.tag(4, VARINT);
    writer.varint(event.droppedAttributesCount || 0);
    writer.close(eventAt);
  }
  writer.tag(12, VARINT);
  writer.varint(ended.droppedEventsCount);
  for (const link of ended.links) {
    writer.tag(13, LENGTH_DELIMITED);
    const linkAt = writer.open();
    writer.tag(1, LENGTH_DELIMITED);
    writer.hex(link.context.traceId);
    writer.tag(2, LENGTH_DELIMITED);
    writer.hex(link.context.spanId);
    const linkState = link.context.traceState?.serialize();
    if (linkState) {
      writer.tag(3, LENGTH_DELIMITED);
      writer.string(linkState);
    }
    if (link.attributes) attributes(writer, link.attributes, 4);
    writer.tag(5, VARINT);
    writer.varint(link.droppedAttributesCount || 0);
    writer.tag(6, FIXED32);
    writer.fixed32(flags(link.context.traceFlags, link.context.isRemote));
    writer.close(linkAt);
  }
  writer.tag(14, VARINT);
  writer.varint(ended.droppedLinksCount);
  writer.tag(15, LENGTH_DELIMITED);
  status(writer, ended.status);
  writer.tag(16, FIXED32);
  writer.fixed32(flags(context.traceFlags, parent?.isRemote));
  writer.close(at);
}

function scope(writer: Writer, of: ScopeLike): void {
  writer.tag(1, LENGTH_DELIMITED);
  const at = writer.open();
  writer.tag(1, LENGTH_DELIMITED);
  writer.string(of.name);
  if (of.version) {
    writer.tag(2, LENGTH_DELIMITED);
    writer.string(of.version);
  }
  if (of.attributes) attributes(writer, of.attributes, 3);
  if (of.droppedAttributesCount) {
    writer.tag(4, VARINT);
    writer.varint(of.droppedAttributesCount);
  }
  writer.close(at);
}

/**
 * Encodes ended spans as one ExportTraceServiceRequest: grouped by resource, then by
 * instrumentation scope, in the order they first appear.
 *
 * @example
 * const body = encodeTraceRequest(spans); // Uint8Array, POSTed as application/x-protobuf
 */
export function encodeTraceRequest(spans: readonly EndedSpan[]): Uint8Array {
  const byResource = new Map<ResourceLike, Map<ScopeLike, EndedSpan[]>>();
  for (const ended of spans) {
    let byScope = byResource.get(ended.resource);
    if (byScope === undefined) byResource.set(ended.resource, (byScope = new Map<ScopeLike, EndedSpan[]>()));
    const list = byScope.get(ended.instrumentationScope);
    if (list === undefined) byScope.set(ended.instrumentationScope, [ended]);
    else list.push(ended);
  }
  // About 350 bytes a span of this service's: most requests need no second buffer.
  const writer = new Writer(Buffer.allocUnsafe(Math.max(4096, spans.length * 512)));
  for (const [resource, byScope] of byResource) {
    writer.tag(1, LENGTH_DELIMITED);
    const resourceSpans = writer.open();
    writer.tag(1, LENGTH_DELIMITED);
    const resourceAt = writer.open();
    if (resource.attributes) attributes(writer, resource.attributes, 1);
    writer.tag(2, VARINT);
    writer.varint(0);
    writer.close(resourceAt);
    for (const [of, list] of byScope) {
      writer.tag(2, LENGTH_DELIMITED);
      const scopeSpans = writer.open();
      scope(writer, of);
      for (const ended of list) {
        writer.tag(2, LENGTH_DELIMITED);
        span(writer, ended);
      }
      if (of.schemaUrl) {
        writer.tag(3, LENGTH_DELIMITED);
        writer.string(of.schemaUrl);
      }
      writer.close(scopeSpans);
    }
    if (resource.schemaUrl) {
      writer.tag(3, LENGTH_DELIMITED);
      writer.string(resource.schemaUrl);
    }
    writer.close(resourceSpans);
  }
  return writer.buffer.subarray(0, writer.pos);
}
