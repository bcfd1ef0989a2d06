import { decodeCursor, encodeCursor, parseChangesLimit, type ProductChange } from '../../domain/changes.js';
import { DomainError } from '../../domain/errors.js';
import type { ChangesFeed } from './changes-feed.js';
import type { Clock } from '../common/clock.js';
import type { CursorKeys } from './cursor-keys.js';

export interface ChangesPage {
  readonly changes: readonly ProductChange[];
  readonly nextCursor: string;
  readonly hasMore: boolean;
}

/**
 * A page of the caller's changes feed: from the beginning without a cursor (every product in
 * the catalog once, and deleted ones still kept), else what changed since the cursor, each
 * product at most once, at its latest change. Cursors are signed with the deployment's key, so
 * a cursor is taken only from the partner it was issued to.
 */
export class ReadChanges {
  constructor(
    private readonly feed: ChangesFeed,
    private readonly keys: CursorKeys,
    private readonly clock: Clock,
  ) {}

  async execute(input: { partnerId: string; cursor: string | undefined; limit: string | undefined }): Promise<ChangesPage> {
    const limit = parseChangesLimit(input.limit);
    const had = this.keys.cursorKey();
    const key = had instanceof Promise ? await had : had;
    const after = input.cursor === undefined ? 0 : decodeCursor(key, input.partnerId, input.cursor, this.clock.now());
    const page = await this.feed.read(input.partnerId, after, limit + 1);
    if (after > 0 && after < page.horizon) {
      throw new DomainError('cursor_expired', 'The cursor is older than the feed keeps deleted products: start again without a cursor.');
    }
    const changes = page.entries.slice(0, limit);
    const last = changes.at(-1)?.seq ?? after;
    return {
      changes: changes.map(({ sku, productId, change, etag, changedAt }) => ({ sku, productId, change, etag, changedAt })),
      nextCursor: encodeCursor(key, input.partnerId, last),
      hasMore: page.entries.length > limit,
    };
  }
}
