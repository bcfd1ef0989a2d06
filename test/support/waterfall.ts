import type { ReceivedSpan } from './otlp-receiver.js';

const WIDTH = 48;

/**
 * A request's trace as a text waterfall, as a trace viewer draws it: its spans by parentage, each a
 * bar on the request's time line, then the shared spans that link to it (a turn's Redis call, its
 * gathered SELECT) marked `⇠ linked`, each with the number of requests it served. Times in ms from
 * the request's start.
 */
export function renderWaterfall(spans: readonly ReceivedSpan[], request: ReceivedSpan): string {
  const inTrace = spans.filter((span) => span.traceId === request.traceId);
  const linked = spans.filter((span) => span.traceId !== request.traceId && span.links.some((link) => link.traceId === request.traceId));
  const start = [request, ...linked].reduce((least, span) => (span.startNs < least ? span.startNs : least), request.startNs);
  const end = [request, ...inTrace, ...linked].reduce((most, span) => (span.endNs > most ? span.endNs : most), request.endNs);
  const total = Number(end - start) || 1;
  const ms = (ns: bigint): string => (Number(ns) / 1e6).toFixed(2).padStart(6);
  const bar = (span: ReceivedSpan): string => {
    const from = Math.floor((Number(span.startNs - start) / total) * WIDTH);
    const to = Math.max(from + 1, Math.ceil((Number(span.endNs - start) / total) * WIDTH));
    return `${' '.repeat(from)}${'█'.repeat(to - from)}${' '.repeat(Math.max(0, WIDTH - to))}`;
  };
  const lines: string[] = [];
  const draw = (span: ReceivedSpan, depth: number): void => {
    const label = `${'  '.repeat(depth)}${span.name}`.padEnd(40).slice(0, 40);
    lines.push(`${label} |${bar(span)}| ${ms(span.startNs - start)} +${ms(span.endNs - span.startNs)} ms`);
    for (const child of inTrace.filter((candidate) => candidate.parentSpanId === span.spanId)) draw(child, depth + 1);
  };
  draw(request, 0);
  for (const shared of linked) {
    const label = `⇠ linked: ${shared.name} (${shared.links.length} request${shared.links.length === 1 ? '' : 's'})`.padEnd(40).slice(0, 40);
    lines.push(`${label} |${bar(shared)}| ${ms(shared.startNs - start)} +${ms(shared.endNs - shared.startNs)} ms`);
  }
  return lines.join('\n');
}
