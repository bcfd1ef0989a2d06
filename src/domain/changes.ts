import { createHash } from 'node:crypto';
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

const CURSOR = /^c1\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{11})$/;

/** A tag of the partner in its cursors, so one partner's cursor is refused for another. */
function partnerTag(partnerId: string): string {
  return createHash('sha256').update(`changes:${partnerId}`).digest('base64url').slice(0, 11);
}

/** The opaque cursor of a position in a partner's feed: at most 26 characters. */
export function encodeCursor(partnerId: string, seq: number): string {
  return `c1.${seq.toString(36)}.${partnerTag(partnerId)}`;
}

/** The position a cursor names in this partner's feed; a cursor this service did not issue to the partner is refused. */
export function decodeCursor(partnerId: string, cursor: string): number {
  const match = CURSOR.exec(cursor);
  const seq = match === null ? Number.NaN : parseInt(match[1]!, 36);
  if (match === null || match[2] !== partnerTag(partnerId) || !Number.isSafeInteger(seq)) {
    throw new DomainError('invalid_cursor', 'The cursor is not one this service issued for your catalog: start again without a cursor.');
  }
  return seq;
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
