import { randomUUID } from 'node:crypto';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const KEY_PREFIX = /pcat_(live|test)_/i;

/** The caller's `X-Request-Id` if it is short, plain and not a key sent in the wrong header; else a fresh UUID. */
export function requestIdFrom(incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) && !KEY_PREFIX.test(incoming) ? incoming : randomUUID();
}
