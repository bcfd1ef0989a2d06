import type { SamplerName, TracingSettings } from '../tracing/tracing-settings.js';
import { ConfigError, httpUrl, integer, oneOf, text, type Env } from './setting-values.js';

/** The names `OTEL_TRACES_SAMPLER` takes. */
const SAMPLERS: readonly SamplerName[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/**
 * The traces' settings, or null when tracing is off: unless `OTEL_TRACES_EXPORTER=otlp` (and
 * `OTEL_SDK_DISABLED` is not `true`). The SDK's default sampler is `parentbased_always_on`; here
 * the default is `always_on`, which keeps every trace just the same but never lets a caller's
 * `sampled` flag decide (decisions: a partner cannot turn tracing on or off for its requests).
 */
export function tracingSettings(env: Env): TracingSettings | null {
  if (oneOf(env, 'OTEL_SDK_DISABLED', ['true', 'false'] as const, 'false') === 'true') return null;
  const exporter = oneOf(env, 'OTEL_TRACES_EXPORTER', ['otlp', 'none'] as const, 'none');
  if (exporter === 'none') return null;
  const protocolName = text(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') === null ? 'OTEL_EXPORTER_OTLP_PROTOCOL' : 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL';
  const protocol = oneOf(env, protocolName, ['http/protobuf', 'http/json'] as const, 'http/protobuf');
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER', SAMPLERS, 'always_on');
  const maxQueueSize = integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2_048, 1, 1_000_000);
  const maxExportBatchSize = integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1, 1_000_000);
  if (maxExportBatchSize > maxQueueSize) {
    throw new ConfigError('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', `must be at most OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize}); got ${maxExportBatchSize}`);
  }
  return {
    protocol,
    endpoint: httpUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
    tracesEndpoint: httpUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'),
    sampler,
    ratio: sampler.endsWith('traceidratio') ? ratioOf(env) : 1,
    maxQueueSize,
    maxExportBatchSize,
    scheduleDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 1, 3_600_000),
    exportTimeoutMs: integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, 3_600_000),
  };
}

/** `OTEL_TRACES_SAMPLER_ARG` for a ratio sampler: a number from 0 to 1, 1 when unset. */
function ratioOf(env: Env): number {
  const value = text(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (value === null) return 1;
  const ratio = /^(?:0|1|0?\.[0-9]+|[01]\.0*)$/.test(value) ? Number(value) : Number.NaN;
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1 (the share of traces kept); got ${JSON.stringify(value)}`);
  return ratio;
}
