import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { encodeTraceRequest, type EndedSpan } from './otlp-protobuf.js';

/** The span exporter the service gives NodeSDK for OTLP/HTTP protobuf, with its own encoder (otlp-protobuf.ts). */

/**
 * Whether the OTEL_* environment asks for what NodeSDK would make OpenTelemetry's OTLP/HTTP
 * protobuf exporter for: OTEL_TRACES_EXPORTER unset or `otlp`, and the protocol `http/protobuf`
 * (the default). Any other choice is left to NodeSDK.
 *
 * @example
 * protobufExportWanted({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }) //=> false
 */
export function protobufExportWanted(env: Readonly<Record<string, string | undefined>>): boolean {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name !== 'null');
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf';
  return (exporters.length === 0 || (exporters.length === 1 && exporters[0] === 'otlp')) && protocol === 'http/protobuf';
}

/**
 * OpenTelemetry's OTLP/HTTP protobuf span exporter as its own package builds it (endpoint,
 * headers, timeout, compression and retries from the OTEL_EXPORTER_OTLP_* environment), with
 * encodeTraceRequest as its encoder.
 *
 * @example
 * new NodeSDK({ traceExporter: protobufSpanExporter() });
 */
export function protobufSpanExporter(): OTLPExporterBase<EndedSpan[]> {
  return new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
      { serializeRequest: encodeTraceRequest, deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data) },
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      undefined,
    ),
  );
}
