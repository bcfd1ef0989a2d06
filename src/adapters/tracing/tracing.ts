import type { Attributes, Span, SpanContext, SpanKind, SpanStatusCode } from '@opentelemetry/api';

/** SpanStatusCode.ERROR, without loading the API's module where tracing may be off. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the enum's value, fixed by the OTLP protocol
export const SPAN_FAILED = 2 as SpanStatusCode.ERROR;
/** SpanKind.CLIENT, likewise: a call this process makes to another (a webhook delivery). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the enum's value, fixed by the OTLP protocol
export const CLIENT_SPAN = 2 as SpanKind.CLIENT;

/**
 * Traces as the adapters draw them (decisions: traces). Off, there is none (`tracing()` answers
 * undefined) and nothing on the request path does any tracing work: the SDK is not even loaded.
 * On, the composition root puts one here for the process, as OpenTelemetry's own global provider
 * works: the spans are drawn by the adapters that do the work (the pipeline, the count, the cache,
 * the database), and threading a tracer through every constructor between them would add a
 * parameter to twenty rooms for what the process has once.
 */
export interface Tracing {
  /** A request's server span: a child of the caller's span when `traceparent` is valid, else a root. */
  startServer(name: string, traceparent: string | undefined, tracestate: string | undefined, attributes: Attributes): Span;
  /** A span of the active one's (or a root, with none active). */
  startChild(name: string, attributes?: Attributes, kind?: SpanKind): Span;
  /**
   * A root span for one operation that serves many requests (a turn's one Redis call, its gathered
   * SELECT), linked from each of their spans rather than parented under whichever came first, and
   * kept whenever one of them is; undefined when none is kept, so nothing is drawn.
   */
  startShared(name: string, links: readonly SpanContext[], attributes?: Attributes): Span | undefined;
  /**
   * A trace of its own (the CLI's import, a webhook delivery linked to the import that queued it),
   * kept as the sampler decides a root, or whenever a link's trace is kept.
   */
  startRoot(name: string, attributes?: Attributes, links?: readonly SpanContext[], kind?: SpanKind): Span;
  /** Runs `run` with `span` active: the spans it starts are its children, its log lines carry its ids. */
  within<T>(span: Span, run: () => T): T;
  /** The active span, if any. */
  active(): Span | undefined;
  /** The W3C Trace Context headers that make a receiver's spans children of `span`. */
  headersOf(span: Span): Record<string, string>;
  /** A span context from a `traceparent` written earlier (a delivery's import), or undefined. */
  contextOf(traceparent: string | undefined): SpanContext | undefined;
  /** Exports what is queued, within `deadlineMs`, then stops. */
  shutdown(deadlineMs: number): Promise<void>;
}

let current: Tracing | undefined;

/** This process's tracing, or undefined while it is off. */
export function tracing(): Tracing | undefined {
  return current;
}

/** Puts the process's tracing in place (undefined: off again). */
export function useTracing(chosen: Tracing | undefined): void {
  current = chosen;
}

/**
 * Runs `run` inside a child span of the active span when that one is recorded, or simply runs it:
 * an unsampled request's steps make no spans of their own. The span ends when `run` settles, marked
 * as an error when it fails.
 */
export async function traced<T>(name: string, attributes: Attributes, run: (span: Span | undefined) => Promise<T>): Promise<T> {
  const on = current;
  if (on === undefined || on.active()?.isRecording() !== true) return run(undefined);
  const span = on.startChild(name, attributes);
  try {
    const result = await on.within(span, () => run(span));
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}

/** The active span's context when it is recorded: what a shared operation links from. */
export function linkableContext(): SpanContext | undefined {
  const span = current?.active();
  return span !== undefined && span.isRecording() ? span.spanContext() : undefined;
}

/**
 * The span of one operation serving many requests (decisions: traces), linked from those of them
 * whose spans are recorded; undefined when tracing is off or none is.
 */
export function startSharedSpan(name: string, links: readonly (SpanContext | undefined)[], attributes: Attributes): Span | undefined {
  const on = current;
  if (on === undefined) return undefined;
  const recorded = links.filter((link): link is SpanContext => link !== undefined);
  return recorded.length === 0 ? undefined : on.startShared(name, recorded, attributes);
}

/** Ends a span, as failed when `error` is given (its name only: a message may hold what no span may). */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (span === undefined) return;
  if (error !== undefined) {
    const type = error instanceof Error ? error.name : 'error';
    span.setAttribute('error.type', type);
    span.setStatus({ code: SPAN_FAILED, message: type });
  }
  span.end();
}
