import { context, ROOT_CONTEXT, SpanKind, trace, type Context, type Span, type SpanContext, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from './tracing-settings.js';
import { ServiceSampler } from './service-sampler.js';
import { SpanQueue, type SpanQueueCounts } from './span-queue.js';
import type { Tracing } from './tracing.js';

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
 * exported over OTLP/HTTP, context carried through async work by AsyncLocalStorage. This module is
 * imported only when tracing is on (`await import`), so with it off the SDK is never loaded.
 */
export function startOtelTracing(settings: TracingSettings, counts: SpanQueueCounts, serviceName = 'partner-catalog-api'): Tracing {
  const url = tracesUrl(settings);
  // The exporters read OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION from the environment themselves.
  const exporter: SpanExporter = settings.protocol === 'http/json' ? new JsonExporter(url === undefined ? {} : { url }) : new ProtobufExporter(url === undefined ? {} : { url });
  const queue = new SpanQueue(exporter, settings, counts);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES come over the service's own name.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({ resource, sampler: new ServiceSampler(settings.sampler, settings.ratio), spanProcessors: [queue] });
  const tracer = provider.getTracer('partner-catalog-api');
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const propagator = new W3CTraceContextPropagator();
  const activeContext = (): Context => context.active();

  return {
    startServer(name, traceparent, tracestate, attributes) {
      const carrier: Record<string, string | undefined> = { traceparent, tracestate };
      const parent = traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, carrier, HEADERS);
      return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    },
    startChild(name, attributes = {}, kind = SpanKind.INTERNAL) {
      return tracer.startSpan(name, { kind, attributes }, activeContext());
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
    within(span, run) {
      return context.with(trace.setSpan(activeContext(), span), run);
    },
    active(): Span | undefined {
      return trace.getSpan(activeContext());
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
      context.disable();
    },
  };
}

