import { isSpanContextValid, SpanKind, trace, TraceFlags, type Attributes, type Context, type Link, type SpanContext } from '@opentelemetry/api';
import { SamplingDecision, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace';
import type { SamplerName } from './tracing-settings.js';

const KEEP: SamplingResult = { decision: SamplingDecision.RECORD_AND_SAMPLED };
const DROP: SamplingResult = { decision: SamplingDecision.NOT_RECORD };

/**
 * The sampler of `OTEL_TRACES_SAMPLER`, with what a public API needs on top (decisions: traces):
 * - A span of this process's follows its parent: a request's steps are kept with the request.
 * - A caller's span (a valid `traceparent`) is continued, its trace id kept; its `sampled` flag
 *   decides only under a `parentbased_*` sampler. Otherwise the decision is the operator's ratio
 *   drawn at random, not from the trace id, which the caller chose: a partner cannot make its
 *   requests traced by choosing its ids either.
 * - A shared operation (a turn's one Redis call, its gathered SELECT) is kept when one of the
 *   requests linked to it is.
 * A request is decided before anything of its span is made (`keepsRequest`), so one not kept costs
 * no span; its server span, started only once kept, is kept here.
 */
export class ServiceSampler implements Sampler {
  private readonly parentBased: boolean;
  private readonly rootRatio: number;

  constructor(name: SamplerName, ratio: number) {
    this.parentBased = name.startsWith('parentbased_');
    const root = this.parentBased ? name.slice('parentbased_'.length) : name;
    this.rootRatio = root === 'always_on' ? 1 : root === 'always_off' ? 0 : ratio;
  }

  /** Whether a request whose caller's span is `parent` (none: a root) is traced. */
  keepsRequest(parent: SpanContext | undefined): boolean {
    if (parent !== undefined && isSpanContextValid(parent) && this.parentBased) return (parent.traceFlags & TraceFlags.SAMPLED) !== 0;
    return this.draws();
  }

  shouldSample(context: Context, _traceId: string, _name: string, kind: SpanKind, _attributes: Attributes, links: Link[]): SamplingResult {
    // A request's server span is started only once `keepsRequest` kept it.
    if (kind === SpanKind.SERVER) return KEEP;
    const parent = trace.getSpanContext(context);
    // Below a span of this process's (a caller's span is decided in `keepsRequest`): kept with it.
    if (parent !== undefined && isSpanContextValid(parent)) return (parent.traceFlags & TraceFlags.SAMPLED) !== 0 ? KEEP : DROP;
    for (const link of links) if ((link.context.traceFlags & TraceFlags.SAMPLED) !== 0) return KEEP;
    return this.draw();
  }

  toString(): string {
    return `ServiceSampler{parentBased=${this.parentBased}, ratio=${this.rootRatio}}`;
  }

  private draw(): SamplingResult {
    return this.draws() ? KEEP : DROP;
  }

  private draws(): boolean {
    return this.rootRatio >= 1 || (this.rootRatio > 0 && Math.random() < this.rootRatio);
  }
}
