/**
 * The trace id of a W3C `traceparent` header, or undefined when there is none or it breaks the
 * Trace Context rules: `version-traceid-parentid-flags` in lower-case hex, version `ff` never valid,
 * version `00` with exactly four fields, a later version with at least those four, and neither id
 * all zeros. A malformed header is ignored, as the rules ask.
 */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  if (traceparent === undefined) return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version, traceId, parentId, rest] = match as unknown as [string, string, string, string, string];
  if (version === 'ff' || (version === '00' && rest !== '')) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return traceId;
}

/** Bounded: a longer value is no header a tracer sends. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}((?:-[\x21-\x7e]{0,200})?)$/;
