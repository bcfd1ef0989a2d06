import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from '../../application/common/clock.js';
import type { RateLimiter } from '../../application/access/rate-limiter.js';
import { countOnShare, rateLimitStatus, type RateLimitStatus, type SharedCount, type ShareWindow } from '../../domain/rate-limit.js';
import type { CountTaker, RedisRequestRoundTrip } from './request-round-trip.js';

const DEFAULT_KEY_PREFIX = 'pcat:rl:';

export interface RedisRateLimiterOptions {
  readonly limit: number;
  /** Most keys whose last answer from Redis (and count on this instance's share) are remembered; the least recently seen goes first. */
  readonly maxKeys?: number;
  readonly clock?: Clock;
  /** Prepended to every key id; the key id is an id, never a key or its hash. */
  readonly keyPrefix?: string;
}

/**
 * What this instance knows of a key: Redis's last answer for it (a window that ended at -Infinity
 * when Redis has not answered for it), its count on its own share since, and its counts sent and not
 * yet answered. Changed in place: it is written on every count.
 */
interface KeyState extends SharedCount {
  remaining: number;
  endsAt: number;
  local: ShareWindow | undefined;
  /**
   * The key's counts made on this instance whose round trip has not ended: each is added in `consume`,
   * before the round trip, and taken off in the one of `counted` or `notCounted` that ends it. Redis's
   * last answer did not see them, and each takes one of what it said was left.
   */
  inFlight: number;
  /**
   * The key's requests counted on this instance's share (Redis lost, or slow) that Redis has not yet
   * been told of: the next count adds them to Redis's counter, so the window's count there is that of
   * every instance's requests, those made while Redis was away included. Without it, a Redis back
   * within the window would admit the whole of what it last said was left on top of what the
   * instances admitted on their shares meanwhile.
   */
  owed: number;
}

/**
 * The fixed-window counter (docs/decisions.md, rate limit), shared by every instance through
 * Redis: each request is counted in the request's round trip (request-round-trip.ts). When that
 * gives no count (Redis lost, or slow this once), the request is counted on this instance's share.
 *
 * The share: each count also tells how many instances Redis has seen within a window, and this
 * instance remembers per key what Redis last said was left and when the window ends. On its own, it
 * admits its share of that until the window ends, then its share of a fresh window, so the
 * instances together admit about one limit, not one each.
 */
export class RedisRateLimiter implements RateLimiter, CountTaker<RateLimitStatus> {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly keyPrefix: string;
  private readonly clock: Clock;
  private readonly keys: LRUCache<string, KeyState>;
  /** How many instances Redis last said it has seen, this one included. */
  private instances = 1;

  constructor(
    private readonly roundTrip: RedisRequestRoundTrip,
    options: RedisRateLimiterOptions,
    /** Whether `close` closes the round trip: only when no one else uses it. */
    private readonly ownsRoundTrip = false,
  ) {
    this.limit = options.limit;
    this.windowMs = roundTrip.windowMs;
    this.clock = options.clock ?? systemClock;
    this.keys = new LRUCache({ max: options.maxKeys ?? 100_000 });
    this.keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  }

  consume(keyId: string, partnerId?: string): Promise<RateLimitStatus> {
    // Before the round trip, which may end at once (`notCounted`, Redis lost). `peek`: every request
    // comes here, and the answer's `get` makes the key recent anyway.
    const state = this.keys.peek(keyId);
    let increment = 1;
    if (state === undefined) {
      this.keys.set(keyId, { remaining: 0, endsAt: -Infinity, local: undefined, inFlight: 1, owed: 0 });
    } else {
      state.inFlight += 1;
      if (state.owed > 0) {
        // Requests of a share window that has ended belong to a window Redis has ended too.
        if (state.local === undefined || state.local.endsAt > this.clock.now()) increment += state.owed;
        state.owed = 0;
      }
    }
    return this.roundTrip.count(this.keyPrefix + keyId, keyId, partnerId, this, increment);
  }

  /** Resolves once connected to Redis; rejects if that takes longer than `timeoutMs`. */
  ready(timeoutMs?: number): Promise<void> {
    return this.roundTrip.ready(timeoutMs);
  }

  /** Closes the round trip when it is this limiter's own. */
  close(): Promise<void> {
    return this.ownsRoundTrip ? this.roundTrip.close() : Promise.resolve();
  }

  /** Requests whose count Redis did not answer in time, each counted on this instance's share, since start. */
  slowCounts(): number {
    return this.roundTrip.slowCounts();
  }

  /** How many instances Redis last said share it, this one included (1 before it has said). */
  instancesSeen(): number {
    return this.instances;
  }

  /** True while requests are counted on this instance's share: Redis was lost and has not answered a probe since. */
  usingFallback(): boolean {
    return this.roundTrip.usingFallback();
  }

  /**
   * Whether this instance can show the key has room for one more request, with no count made: Redis
   * answered for it in a window not yet ended, and what it said was left is more than the key's
   * counts still in flight here, each of which takes one of it. Anything else is left to the count:
   * a key not counted here (another instance may have used it up), one whose window has ended, one
   * counted on this instance's share (Redis lost or slow).
   *
   * So a yes is wrong only when other instances used up the key's room after Redis last answered
   * here, and only until Redis answers one of this instance's counts of the key refused: a count
   * only grows within its window, so from then on the answer says none is left. The yeses whose
   * counts are refused so are never more than the `remaining` they were given on, less than the
   * limit: for a key in one window, on one instance.
   */
  leavesRoom(keyId: string): boolean {
    const state = this.keys.peek(keyId);
    return state !== undefined && state.remaining > state.inFlight && state.local === undefined
      && !this.roundTrip.usingFallback() && this.clock.now() < state.endsAt;
  }

  /** Redis's answer, remembered for the key in case Redis is lost before the next. */
  counted(keyId: string, count: number, msLeft: number, instances: number): RateLimitStatus {
    if (instances > 0) this.instances = instances;
    const remaining = this.limit - count;
    const endsAt = this.clock.now() + msLeft;
    const state = this.keys.get(keyId);
    if (state === undefined) {
      // Forgotten while it was counted, more keys than `maxKeys` in use since: how many of its counts
      // are still in flight is lost (see `ended`). Redis's answer is kept as it is: it is what this
      // instance's share is worked out from should Redis be lost.
      this.keys.set(keyId, { remaining, endsAt, local: undefined, inFlight: 0, owed: 0 });
    } else {
      state.remaining = remaining;
      state.endsAt = endsAt;
      state.local = undefined;
      ended(state);
    }
    return rateLimitStatus(count, this.limit, msLeft);
  }

  /**
   * No answer from Redis: the request is counted on this instance's share of what the key had left
   * (domain/rate-limit.ts), and what its count carried and Redis did not get is owed to it again.
   */
  notCounted(keyId: string, carried: number): RateLimitStatus {
    const state = this.keys.get(keyId);
    const { window, status } = countOnShare(state?.local, state, this.clock.now(), this.limit, this.windowMs, this.instances);
    if (state === undefined) {
      this.keys.set(keyId, { remaining: 0, endsAt: -Infinity, local: window, inFlight: 0, owed: carried });
    } else {
      state.local = window;
      state.owed += carried;
      ended(state);
    }
    return status;
  }
}

/**
 * One of the key's counts has ended. Never below none: the counts of a key forgotten while they were
 * in flight end on its new state, which did not add them (so until they have, it may show room for
 * as many more as they are; only with more keys in use than `maxKeys`).
 */
function ended(state: KeyState): void {
  if (state.inFlight > 0) state.inFlight -= 1;
}
