/**
 * Whether the standard OpenTelemetry environment asks for traces: an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or a traces exporter
 * (`OTEL_TRACES_EXPORTER` other than `none`), unless `OTEL_SDK_DISABLED=true`. Apart from
 * tracing.ts, which is loaded only when this says yes.
 *
 * @example
 * tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }) //=> true
 * tracingRequested({}) //=> false
 */
export function tracingRequested(env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim() ?? '';
  if (exporter !== '') return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}
