import type { FeedEntry } from '../../domain/changes.js';

/** A partner's page of its feed, and what tells whether a cursor is still served. */
export interface FeedPage {
  /** Entries after the position asked for, oldest first. */
  readonly entries: readonly FeedEntry[];
  /**
   * The newest `seq` of a deleted product no longer kept (0 if none): a position before it may
   * have missed that deletion, so its cursor is expired.
   */
  readonly horizon: number;
}

/** Where a partner's changes are read (docs/architecture.md, the changes feed). */
export interface ChangesFeed {
  /** The partner's entries with `seq` above `afterSeq`, oldest first, at most `limit`. */
  read(partnerId: string, afterSeq: number, limit: number): Promise<FeedPage>;
}
