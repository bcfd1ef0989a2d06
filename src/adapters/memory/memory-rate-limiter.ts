import { LRUCache } from 'lru-cache';
import type { Clock } from '../../application/common/clock.js';
import type { RateLimiter } from '../../application/access/rate-limiter.js';
import { countRequest, RATE_LIMIT_WINDOW_MS, type RateLimitStatus, type RateLimitWindow } from '../../domain/rate-limit.js';

export interface MemoryRateLimiterOptions {
  readonly limit: number;
  readonly clock: Clock;
  readonly windowMs?: number;
  /** Most keys tracked at once; the least recently seen is forgotten first. */
  readonly maxKeys?: number;
}

/** The fixed-window counter (docs/decisions.md, rate limit), in this process only. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows: LRUCache<string, RateLimitWindow>;
  private readonly limit: number;
  private readonly clock: Clock;
  private readonly windowMs: number;

  constructor(options: MemoryRateLimiterOptions) {
    this.limit = options.limit;
    this.clock = options.clock;
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.windows = new LRUCache({ max: options.maxKeys ?? 100_000 });
  }

  consume(keyId: string): Promise<RateLimitStatus> {
    const { window, status } = countRequest(this.windows.get(keyId), this.clock.now(), this.limit, this.windowMs);
    this.windows.set(keyId, window);
    return Promise.resolve(status);
  }
}
