/** Where a key stands in its current rate-limit window, after counting one request. */
export interface RateLimitStatus {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Whole seconds until the window ends, at least 1. */
  readonly resetSeconds: number;
}

export const RATE_LIMIT_WINDOW_MS = 60_000;
export const RATE_LIMIT_WINDOW_SECONDS = RATE_LIMIT_WINDOW_MS / 1000;

/** Requests a key may make in a window unless the operator sets another figure (RATE_LIMIT_PER_MINUTE). */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 100;

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

/** What a key had left, as the shared count last answered for it. */
export interface SharedCount {
  readonly remaining: number;
  readonly endsAt: number;
}

/** A key's window counted by one instance alone, on its share of what the key may still use. */
export interface ShareWindow {
  readonly allowance: number;
  readonly used: number;
  readonly endsAt: number;
}

/**
 * One instance's share of `remaining` among `instances`, rounded up: a key with anything left is
 * refused by no instance (rounding down would refuse a key with 1 left on each of 2), and the
 * instances together admit at most `instances - 1` more than `remaining`.
 */
export function shareOf(remaining: number, instances: number): number {
  return Math.ceil(Math.max(0, remaining) / Math.max(1, instances));
}

/**
 * Counts one request at `now` on this instance's share, while the shared count cannot be asked: the
 * share of what the key had left when the shared count last answered, until that window ends; then
 * a share of a fresh window's limit. So `instances` instances admit about one limit between them.
 */
export function countOnShare(
  local: ShareWindow | undefined,
  shared: SharedCount | undefined,
  now: number,
  limit: number,
  windowMs: number,
  instances: number,
): { window: ShareWindow; status: RateLimitStatus } {
  let window: ShareWindow;
  if (local !== undefined && local.endsAt > now) window = { ...local, used: local.used + 1 };
  else if (local === undefined && shared !== undefined && shared.endsAt > now) window = { allowance: shareOf(shared.remaining, instances), used: 1, endsAt: shared.endsAt };
  else window = { allowance: shareOf(limit, instances), used: 1, endsAt: now + windowMs };
  const msLeft = window.endsAt - now;
  return {
    window,
    status: { allowed: window.used <= window.allowance, limit, remaining: Math.max(0, window.allowance - window.used), resetSeconds: Math.max(1, Math.ceil(msLeft / 1000)) },
  };
}
