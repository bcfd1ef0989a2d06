import { ROOT_CONTEXT, SpanKind, trace, type Context, type SpanContext, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from './tracing-settings.js';
import { ServiceSampler } from './service-sampler.js';
import { SpanQueue, type SpanQueueCounts } from './span-queue.js';
import type { ServerParent, Tracing } from './tracing.js';

const HEADERS: TextMapGetter<Record<string, string | undefined>> & TextMapSetter<Record<string, string>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The collector's traces endpoint: the per-signal one as given, or the base URL with `/v1/traces`. */
function tracesUrl(settings: TracingSettings): string | undefined {
  if (settings.tracesEndpoint !== null) return settings.tracesEndpoint;
  return settings.endpoint === null ? undefined : `${settings.endpoint}/v1/traces`;
}

/**
 * Tracing with the OpenTelemetry SDK: spans kept by the service's sampler, queued (bounded) and
 * exported over OTLP/HTTP. No context manager: the adapters hand spans on themselves (`runIn`). This
 * module is imported only when tracing is on (`await import`), so with it off the SDK is never loaded.
 */
export function startOtelTracing(settings: TracingSettings, counts: SpanQueueCounts, serviceName = 'partner-catalog-api'): Tracing {
  const url = tracesUrl(settings);
  // The exporters read OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION from the environment themselves.
  const exporter: SpanExporter = settings.protocol === 'http/json' ? new JsonExporter(url === undefined ? {} : { url }) : new ProtobufExporter(url === undefined ? {} : { url });
  const queue = new SpanQueue(exporter, settings, counts);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES come over the service's own name.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }).merge(detectResources({ detectors: [envDetector] }));
  const sampler = new ServiceSampler(settings.sampler, settings.ratio);
  const provider = new TracerProvider({ resource, sampler, spanProcessors: [queue] });
  const tracer = provider.getTracer('partner-catalog-api');
  const propagator = new W3CTraceContextPropagator();

  return {
    sampleServer(traceparent, tracestate) {
      if (traceparent === undefined) return sampler.keepsRequest(undefined) ? ROOT_CONTEXT as unknown as ServerParent : undefined;
      const carrier: Record<string, string | undefined> = { traceparent, tracestate };
      const parent = propagator.extract(ROOT_CONTEXT, carrier, HEADERS);
      return sampler.keepsRequest(trace.getSpanContext(parent)) ? parent as unknown as ServerParent : undefined;
    },
    startServer(name, parent, attributes) {
      return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent as unknown as Context);
    },
    startChild(name, parent, attributes = {}, kind = SpanKind.INTERNAL) {
      return tracer.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent));
    },
    startShared(name, links, attributes = {}) {
      if (links.length === 0) return undefined;
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes, links: links.map((linked) => ({ context: linked })), root: true }, ROOT_CONTEXT);
      if (span.isRecording()) return span;
      span.end();
      return undefined;
    },
    startRoot(name, attributes = {}, links = [], kind = SpanKind.INTERNAL) {
      return tracer.startSpan(name, { kind, attributes, links: links.map((linked) => ({ context: linked })), root: true }, ROOT_CONTEXT);
    },
    headersOf(span) {
      const carrier: Record<string, string> = {};
      propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, HEADERS);
      return carrier;
    },
    contextOf(traceparent): SpanContext | undefined {
      if (traceparent === undefined) return undefined;
      return trace.getSpanContext(propagator.extract(ROOT_CONTEXT, { traceparent }, HEADERS));
    },
    async shutdown(deadlineMs) {
      await queue.shutdown(deadlineMs);
      await provider.shutdown().catch(() => undefined);
    },
  };
}

