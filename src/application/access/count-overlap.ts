import type { Principal } from '../../domain/api-key.js';
import type { ChangesElsewhere } from '../instances/changes-elsewhere.js';
import type { RateLimiter } from './rate-limiter.js';

/** What a reading started before its request's count depended on: the partner's catalog as this instance knew it. */
export interface OverlapMark {
  readonly epoch: number;
  readonly catalogToken: string;
}

/**
 * Lets a request's reading of its partner's catalog start while its count is under way, so the two
 * round trips (Redis's count, the database's read) do not wait for each other, and keeps the
 * promises the count makes: the count still decides whether anything is answered, and an answer
 * shows every catalog change announced before it.
 *
 * A read starts early only when this instance can show the key has room (`RateLimiter.leavesRoom`):
 * Redis answered for the key here, in a window not yet ended, with more left than the key's counts
 * still in flight here. A key this instance has not counted in its window, or saw past its limit,
 * waits for its count however many of its requests come at once: it costs no database read. An early
 * read is dropped as over the limit only when other instances used up the key's room after Redis
 * last answered it here, and then at most that answer's `remaining` (less than the limit) for the key
 * in that window on this instance: Redis's first refusal shows none left for the rest of it. (A key
 * the count shows revoked drops its read too.) It stands only if the count shows
 * the partner's catalog token as it was when the read started (same token, same epoch of the shared
 * store): the token then moved for no change since the count that last showed it, and the read,
 * started after that count, saw every change announced before it. Otherwise it is made again.
 */
export class CountOverlap {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly watch: ChangesElsewhere,
  ) {}

  /** The mark to start the request's reading under now, or undefined when it must wait for the count. */
  start(principal: Principal): OverlapMark | undefined {
    const { watch } = this;
    if (!watch.isShared() || this.limiter.leavesRoom?.(principal.keyId) !== true) return undefined;
    const catalogToken = watch.catalogToken(principal.catalogId);
    // No token to compare with (none seen yet, or the last read of it was given up): the count decides first.
    return catalogToken === undefined ? undefined : { epoch: watch.epoch, catalogToken };
  }

  /** Whether reading started under the mark still stands, now that the request is counted. */
  stands(principal: Principal, mark: OverlapMark): boolean {
    const { watch } = this;
    return watch.isShared() && watch.epoch === mark.epoch && watch.catalogToken(principal.catalogId) === mark.catalogToken;
  }
}
