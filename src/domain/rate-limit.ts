/** Where a key stands in its current rate-limit window, after counting one request. */
export interface RateLimitStatus {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Whole seconds until the window ends, at least 1. */
  readonly resetSeconds: number;
}

export const RATE_LIMIT_WINDOW_MS = 60_000;

/** One key's fixed window: it starts with the key's first request and is refilled whole when it ends. */
export interface RateLimitWindow {
  readonly count: number;
  readonly endsAt: number;
}

/** Counts one request at `now` (ms) and returns the window to keep and the resulting status. */
export function countRequest(
  current: RateLimitWindow | undefined,
  now: number,
  limit: number,
  windowMs: number,
): { window: RateLimitWindow; status: RateLimitStatus } {
  const window = current === undefined || current.endsAt <= now
    ? { count: 1, endsAt: now + windowMs }
    : { count: current.count + 1, endsAt: current.endsAt };
  return { window, status: rateLimitStatus(window.count, limit, window.endsAt - now) };
}

/** The status after `count` requests, with `msLeft` until the window ends. */
export function rateLimitStatus(count: number, limit: number, msLeft: number): RateLimitStatus {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)),
  };
}
