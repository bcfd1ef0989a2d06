/** How sampling is decided: the OpenTelemetry SDK's `OTEL_TRACES_SAMPLER` names. */
export type SamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';

/**
 * Traces (decisions: traces), read from the OpenTelemetry SDK's own variables. Only the names this
 * service acts on are read here; the exporter reads the rest itself (`OTEL_EXPORTER_OTLP_HEADERS`,
 * `_TIMEOUT`, `_COMPRESSION`, the per-signal `OTEL_EXPORTER_OTLP_TRACES_*`), and the resource
 * `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.
 */
export interface TracingSettings {
  /** OTLP over HTTP: protobuf (the default) or JSON. */
  readonly protocol: 'http/protobuf' | 'http/json';
  /** The collector's base URL (`/v1/traces` is added), or the traces endpoint itself; null: the exporter's default, http://localhost:4318. */
  readonly endpoint: string | null;
  readonly tracesEndpoint: string | null;
  readonly sampler: SamplerName;
  /** The share of traces kept by the `traceidratio` samplers, 0 to 1. */
  readonly ratio: number;
  /** Spans waiting for export at most; past it an ended span is dropped and counted. */
  readonly maxQueueSize: number;
  /** Spans one export sends at most. */
  readonly maxExportBatchSize: number;
  /** The longest a span waits for its export. */
  readonly scheduleDelayMs: number;
  /** The longest one export may take before it is given up. */
  readonly exportTimeoutMs: number;
}
