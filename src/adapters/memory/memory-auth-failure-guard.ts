import { isIPv6 } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { AuthFailureGuard } from '../../application/access/auth-failure-guard.js';
import type { Clock } from '../../application/common/clock.js';
import { countRequest, RATE_LIMIT_WINDOW_MS, type RateLimitWindow } from '../../domain/rate-limit.js';

export interface MemoryAuthFailureGuardOptions {
  /** Failed authentications an address may have in one window before it is held back. */
  readonly failuresPerWindow: number;
  readonly clock: Clock;
  readonly windowMs?: number;
  /** Most addresses (and, separately, recently good keys) remembered at once; the least recently seen go first. */
  readonly maxEntries?: number;
}

/**
 * Failed authentications per address in fixed windows, in this process. An IPv6 address counts
 * with its whole /64, the block one host usually holds, so rotating through it gains nothing.
 */
export class MemoryAuthFailureGuard implements AuthFailureGuard {
  private readonly failures: LRUCache<string, RateLimitWindow>;
  private readonly goodKeys: LRUCache<string, true>;
  private readonly limit: number;
  private readonly clock: Clock;
  private readonly windowMs: number;

  constructor(options: MemoryAuthFailureGuardOptions) {
    this.limit = options.failuresPerWindow;
    this.clock = options.clock;
    this.windowMs = options.windowMs ?? RATE_LIMIT_WINDOW_MS;
    this.failures = new LRUCache({ max: options.maxEntries ?? 100_000 });
    this.goodKeys = new LRUCache({ max: options.maxEntries ?? 100_000, ttl: this.windowMs });
  }

  secondsToWait(address: string, keyHash: string | null): number {
    const window = this.failures.get(accountOf(address));
    if (window === undefined || window.count < this.limit) return 0;
    const msLeft = window.endsAt - this.clock.now();
    if (msLeft <= 0) return 0;
    if (keyHash !== null && this.goodKeys.has(keyHash)) return 0;
    return Math.ceil(msLeft / 1000);
  }

  failed(address: string): void {
    const account = accountOf(address);
    const { window } = countRequest(this.failures.get(account), this.clock.now(), this.limit, this.windowMs);
    this.failures.set(account, window);
  }

  succeeded(keyHash: string): void {
    this.goodKeys.set(keyHash, true);
  }
}

/** The unit failures are counted in: an IPv4 address, or the /64 an IPv6 address belongs to. */
export function accountOf(address: string): string {
  // Every request asks: an address without a colon (IPv4) skips isIPv6's long expression.
  if (!address.includes(':') || !isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const [head = '', tail = ''] = address.toLowerCase().split('::', 2);
  const front = head === '' ? [] : head.split(':');
  const back = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back] : front;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
