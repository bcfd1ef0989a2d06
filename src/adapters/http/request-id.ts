import { randomUUID } from 'node:crypto';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `X-Request-Id` if it is short and plain, else a fresh UUID. */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

const KEY_LIKE = /pcat_live_[A-Za-z0-9]*/g;

/** A path fit for a log line: anything shaped like a key is masked, whatever position it is in. */
export function loggablePath(path: string): string {
  return path.replace(KEY_LIKE, 'pcat_live_[redacted]');
}
