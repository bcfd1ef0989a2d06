import type { Attributes, Span, SpanContext, SpanKind, SpanStatusCode } from '@opentelemetry/api';

/** SpanStatusCode.ERROR, without loading the API's module where tracing may be off. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the enum's value, fixed by the OTLP protocol
export const SPAN_FAILED = 2 as SpanStatusCode.ERROR;
/** SpanKind.CLIENT, likewise: a call this process makes to another (a webhook delivery). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the enum's value, fixed by the OTLP protocol
export const CLIENT_SPAN = 2 as SpanKind.CLIENT;

/** Where a request's server span starts from: the caller's span, or none. Opaque outside the SDK's module. */
export interface ServerParent {
  readonly brand: 'ServerParent';
}

/**
 * Traces as the adapters draw them (decisions: traces). Off, there is none (`tracing()` answers
 * undefined) and nothing on the request path does any tracing work: the SDK is not even loaded.
 * On, the composition root puts one here for the process, as OpenTelemetry's own global provider
 * works: the spans are drawn by the adapters that do the work (the pipeline, the count, the cache,
 * the database), and threading a tracer through every constructor between them would add a
 * parameter to twenty rooms for what the process has once.
 *
 * No context manager carries spans through async work (AsyncLocalStorage's promise hooks cost every
 * request on Node 20, sampled or not): a recorded span is put in place with `runIn` for the
 * synchronous part of a step, and an adapter that goes on after an await takes it at its entry
 * (`activeSpan()`) and puts it back itself. A request the sampler does not keep has no span at all,
 * so it runs as with tracing off.
 */
export interface Tracing {
  /**
   * Whether a request is traced: where its server span starts from (`traceparent` when valid, else
   * a root), or undefined when the sampler does not keep it, and then it has no span at all.
   */
  sampleServer(traceparent: string | undefined, tracestate: string | undefined): ServerParent | undefined;
  /** A request's server span, once `sampleServer` kept it. */
  startServer(name: string, parent: ServerParent, attributes: Attributes): Span;
  /** A span of `parent`'s. */
  startChild(name: string, parent: Span, attributes?: Attributes, kind?: SpanKind): Span;
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
  /** The W3C Trace Context headers that make a receiver's spans children of `span`. */
  headersOf(span: Span): Record<string, string>;
  /** A span context from a `traceparent` written earlier (a delivery's import), or undefined. */
  contextOf(traceparent: string | undefined): SpanContext | undefined;
  /** Exports what is queued, within `deadlineMs`, then stops. */
  shutdown(deadlineMs: number): Promise<void>;
}

let current: Tracing | undefined;
/** The recorded span whose step is running synchronously now (`runIn`), if any. */
let running: Span | undefined;

/** This process's tracing, or undefined while it is off. */
export function tracing(): Tracing | undefined {
  return current;
}

/** Puts the process's tracing in place (undefined: off again). */
export function useTracing(chosen: Tracing | undefined): void {
  current = chosen;
  running = undefined;
}

/**
 * The recorded span of the step running now: what a step takes at its entry, before its first
 * await, to draw its own span below it or link to it. Undefined outside a recorded span.
 */
export function activeSpan(): Span | undefined {
  return running;
}

/**
 * Runs `run` with `span` as the active span for its synchronous part: what `run` calls before its
 * first await sees it. A recorded span only: an unrecorded one (or none) leaves the active span as it is.
 */
export function runIn<T>(span: Span | undefined, run: () => T): T {
  if (span === undefined || !span.isRecording()) return run();
  const outer = running;
  running = span;
  try {
    return run();
  } finally {
    running = outer;
  }
}

/**
 * Runs `run` inside a child span of the active span when there is one (a recorded span), or simply
 * runs it: an unsampled request's steps make no spans of their own. The span ends when `run`
 * settles, marked as an error when it fails. `run` gets the span, to put it back after an await.
 */
export function traced<T>(name: string, attributes: Attributes, run: (span: Span | undefined) => Promise<T>): Promise<T> {
  return tracedUnder(running, name, attributes, run);
}

/** `traced`, below `parent` (when recorded) rather than below the active span. */
export async function tracedUnder<T>(parent: Span | undefined, name: string, attributes: Attributes, run: (span: Span | undefined) => Promise<T>): Promise<T> {
  const on = current;
  if (on === undefined || parent === undefined || !parent.isRecording()) return run(undefined);
  const span = on.startChild(name, parent, attributes);
  try {
    const result = await runIn(span, () => run(span));
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}

/**
 * The active span's ids, as a log line's fields (pino's mixin while tracing is on: a line's own
 * fields come first). The request log's own writer skips it: a request line names its span itself.
 */
export function traceIdsOfActiveSpan(): Record<string, string> {
  if (running === undefined) return {};
  const { traceId, spanId } = running.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The active span's context: what a shared operation links from. */
export function linkableContext(): SpanContext | undefined {
  return running?.spanContext();
}

/**
 * The span of one operation serving many requests (decisions: traces), linked from those of them
 * whose spans are recorded; undefined when tracing is off or none is.
 */
export function startSharedSpan(name: string, links: readonly (SpanContext | undefined)[], attributes: Attributes): Span | undefined {
  const on = current;
  if (on === undefined) return undefined;
  // Most turns serve no recorded request: they allocate nothing here.
  if (!links.some((link) => link !== undefined)) return undefined;
  return on.startShared(name, links.filter((link): link is SpanContext => link !== undefined), attributes);
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
