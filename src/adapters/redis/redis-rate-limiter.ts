import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from '../../application/common/clock.js';
import type { RateLimiter } from '../../application/access/rate-limiter.js';
import { countOnShare, rateLimitStatus, type RateLimitStatus, type SharedCount, type ShareWindow } from '../../domain/rate-limit.js';
import { DEFAULT_INSTANCES_KEY, RedisRequestRoundTrip, type CountTaker, type RequestRoundTripOptions } from './request-round-trip.js';

const DEFAULT_KEY_PREFIX = 'pcat:rl:';

export interface RedisRateLimiterOptions {
  readonly limit: number;
  /** Most keys whose last answer from Redis (and count on this instance's share) are remembered; the least recently seen goes first. */
  readonly maxKeys?: number;
  readonly clock?: Clock;
  /** Prepended to every key id; the key id is an id, never a key or its hash. */
  readonly keyPrefix?: string;
}

/** A limiter on a round trip of its own, which counts only: `instancesKey` is `<keyPrefix>~instances` when a key prefix is given. */
export function createRedisRateLimiter(options: RedisRateLimiterOptions & Omit<RequestRoundTripOptions, 'watch'>): RedisRateLimiter {
  const instancesKey = options.instancesKey ?? (options.keyPrefix === undefined ? DEFAULT_INSTANCES_KEY : `${options.keyPrefix}~instances`);
  return new RedisRateLimiter(new RedisRequestRoundTrip({ ...options, instancesKey }), options, true);
}

/**
 * What this instance knows of a key: Redis's last answer for it (a window that ended at -Infinity
 * when Redis has not answered for it), and its count on its own share since. Changed in place: it is
 * written on every count.
 */
interface KeyState extends SharedCount {
  remaining: number;
  endsAt: number;
  local: ShareWindow | undefined;
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
    return this.roundTrip.count(this.keyPrefix + keyId, keyId, partnerId, this);
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
   * Room by Redis's last answer for the key, with no count made: a key not seen, or whose window has
   * ended, has room; one counted on this instance's share (Redis lost or slow) is left to its count.
   */
  leavesRoom(keyId: string): boolean {
    if (this.roundTrip.usingFallback()) return false;
    const state = this.keys.peek(keyId);
    if (state === undefined) return true;
    if (state.local !== undefined) return false;
    return state.remaining > 0 || this.clock.now() >= state.endsAt;
  }

  /** Redis's answer, remembered for the key in case Redis is lost before the next. */
  counted(keyId: string, count: number, msLeft: number, instances: number): RateLimitStatus {
    if (instances > 0) this.instances = instances;
    const remaining = this.limit - count;
    const endsAt = this.clock.now() + msLeft;
    const state = this.keys.get(keyId);
    if (state === undefined) {
      this.keys.set(keyId, { remaining, endsAt, local: undefined });
    } else {
      state.remaining = remaining;
      state.endsAt = endsAt;
      state.local = undefined;
    }
    return rateLimitStatus(count, this.limit, msLeft);
  }

  /** No answer from Redis: the request is counted on this instance's share of what the key had left (domain/rate-limit.ts). */
  notCounted(keyId: string): RateLimitStatus {
    const state = this.keys.get(keyId);
    const { window, status } = countOnShare(state?.local, state, this.clock.now(), this.limit, this.windowMs, this.instances);
    if (state === undefined) this.keys.set(keyId, { remaining: 0, endsAt: -Infinity, local: window });
    else state.local = window;
    return status;
  }
}
