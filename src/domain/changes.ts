import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from './errors.js';

/** A change of one product's lookup answer, as the changes feed lists it (docs/api.md, changes feed). */
export interface ProductChange {
  readonly sku: string;
  readonly productId: number;
  readonly change: 'upserted' | 'deleted';
  /** The ETag a lookup of the product answers with; null once it is deleted. */
  readonly etag: string | null;
  readonly changedAt: Date;
}

/** A change where the partner's feed holds it: `seq` grows with every change the partner's catalog records. */
export interface FeedEntry extends ProductChange {
  readonly seq: number;
}

/** Deleted products stay in the feed at least this long; a cursor older than the oldest one dropped is expired. */
export const TOMBSTONE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export const DEFAULT_CHANGES_LIMIT = 100;
export const MAX_CHANGES_LIMIT = 1_000;

/**
 * How long after a deployment began signing its cursors it still takes the unsigned ones it issued
 * before: by then such a cursor is older than the feed keeps deletions anyway.
 */
export const UNSIGNED_CURSOR_WINDOW_MS = TOMBSTONE_RETENTION_MS;

/**
 * The deployment's key for its cursors. Only the service holds `secret`, so only the service can
 * issue a cursor. `signingSince` is when the deployment began signing them; `unsignedIssuedTo`, the
 * partners whose feed it served before, unsigned, and who alone may hold an unsigned cursor of it
 * (none where it never served a feed unsigned: memory storage, a database whose feed began after).
 */
export interface CursorKey {
  readonly secret: Buffer;
  readonly signingSince: Date;
  readonly unsignedIssuedTo: ReadonlySet<string>;
}

/** Characters of a signed cursor's MAC: 96 bits of HMAC-SHA256, in base64url. */
const MAC_LENGTH = 16;
const SIGNED_CURSOR = new RegExp(`^c2\\.([0-9a-z]{1,11})\\.([A-Za-z0-9_-]{${MAC_LENGTH}})$`);
/** The unsigned form issued before the deployment began signing: the tag anyone could compute. */
const UNSIGNED_CURSOR = /^c1\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{11})$/;

/** The MAC of a position in a partner's feed; the position comes first, as written, and holds no `:`. */
function cursorMac(secret: Buffer, partnerId: string, position: string): string {
  return createHmac('sha256', secret).update(`changes-cursor:${position}:${partnerId}`).digest('base64url').slice(0, MAC_LENGTH);
}

/** The tag of the partner in its unsigned cursors. */
function unsignedTag(partnerId: string): string {
  return createHash('sha256').update(`changes:${partnerId}`).digest('base64url').slice(0, 11);
}

/** The opaque cursor of a position in a partner's feed, signed with the deployment's key: at most 31 characters. */
export function encodeCursor(key: CursorKey, partnerId: string, seq: number): string {
  const position = seq.toString(36);
  return `c2.${position}.${cursorMac(key.secret, partnerId, position)}`;
}

/**
 * The position a cursor names in this partner's feed. A cursor this deployment did not sign for the
 * partner is refused. An unsigned one proves nothing (anyone can compute its tag), so it is taken
 * only from a partner the deployment served unsigned, and only for UNSIGNED_CURSOR_WINDOW_MS after
 * signing began; otherwise it is refused like any cursor the service would not issue.
 */
export function decodeCursor(key: CursorKey, partnerId: string, cursor: string, now: number): number {
  const signed = SIGNED_CURSOR.exec(cursor);
  if (signed !== null) {
    const mac = Buffer.from(signed[2]!);
    if (!timingSafeEqual(mac, Buffer.from(cursorMac(key.secret, partnerId, signed[1]!)))) throw invalidCursor();
    return position(signed[1]!);
  }
  const unsigned = UNSIGNED_CURSOR.exec(cursor);
  if (unsigned === null || unsigned[2] !== unsignedTag(partnerId)) throw invalidCursor();
  if (!key.unsignedIssuedTo.has(partnerId) || now >= key.signingSince.getTime() + UNSIGNED_CURSOR_WINDOW_MS) {
    throw new DomainError('invalid_cursor', 'The cursor is of the earlier, unsigned form (c1.), which this service does not take for your catalog: start again without a cursor.');
  }
  return position(unsigned[1]!);
}

function position(base36: string): number {
  const seq = parseInt(base36, 36);
  if (!Number.isSafeInteger(seq)) throw invalidCursor();
  return seq;
}

function invalidCursor(): DomainError {
  return new DomainError('invalid_cursor', 'The cursor is not one this service issued for your catalog: start again without a cursor.');
}

/** The `limit` query parameter: 1 to 1000, 100 when absent. */
export function parseChangesLimit(limit: string | undefined): number {
  if (limit === undefined) return DEFAULT_CHANGES_LIMIT;
  const n = /^[0-9]{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
  if (!(n >= 1 && n <= MAX_CHANGES_LIMIT)) {
    throw new DomainError('invalid_limit', `limit must be a whole number from 1 to ${MAX_CHANGES_LIMIT}; got ${JSON.stringify(limit.slice(0, 20))}.`);
  }
  return n;
}
