import type { Logger } from 'pino';
import type { Principal } from '../../domain/api-key.js';

const KEY_LIKE = /pcat_live_[A-Za-z0-9]*/g;

/** A path fit for a log line: anything shaped like a key is masked, whatever position it is in. */
export function loggablePath(path: string): string {
  return path.replace(KEY_LIKE, 'pcat_live_[redacted]');
}

/** The one log line per request, which the pipeline writes however the request was routed; never a header value or a key. */
export function logRequest(
  logger: Logger,
  request: { requestId: string; traceId: string | undefined; method: string | undefined; path: string; status: number; started: number; principal: Principal | undefined },
): void {
  const { requestId, traceId, method, path, status, started, principal } = request;
  const line: Record<string, unknown> = { reqId: requestId, method, path: loggablePath(path), status, ms: Math.round((performance.now() - started) * 100) / 100 };
  if (traceId !== undefined) line.trace_id = traceId;
  if (principal !== undefined) {
    line.partner = principal.partnerId;
    line.keyId = principal.keyId;
  }
  logger.info(line, 'request');
}
