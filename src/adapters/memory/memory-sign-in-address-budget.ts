import type { AddressReservation, SignInAddressBudget } from '../../application/admin-sign-in/sign-in-address-budget.js';
import type { AttemptAllowance } from '../../domain/admin.js';
import type { RateLimitWindow } from '../../domain/rate-limit.js';

/** Address groups counted at once: a few megabytes. */
const DEFAULT_MAX_GROUPS = 100_000;

/**
 * Each address group's window in a map of at most `maxGroups`. Full, it forgets the windows that
 * have ended, oldest first, and refuses a new group until one ends: a flood from many addresses
 * is refused, and never makes the process forget the count of an address still in its window.
 */
export class MemorySignInAddressBudget implements SignInAddressBudget {
  // In the order the windows opened, so the ones that ended are at the front (same allowance, a clock that goes forward).
  private readonly windows = new Map<string, RateLimitWindow>();
  /** Granted attempts under way, per group: an entry lives only while one is (as many as requests in flight). */
  private readonly underWay = new Map<string, number>();

  constructor(private readonly maxGroups = DEFAULT_MAX_GROUPS) {}

  reserve(group: string, now: number, allowance: AttemptAllowance): AddressReservation {
    const current = this.windows.get(group);
    if (current !== undefined && current.endsAt > now) {
      if (current.count >= allowance.attempts) return { granted: false, windowEndsAt: current.endsAt, refused: 'used_up' };
      if ((this.underWay.get(group) ?? 0) >= allowance.atOnce) return { granted: false, windowEndsAt: now, refused: 'at_once' };
      this.windows.set(group, { count: current.count + 1, endsAt: current.endsAt });
      return this.granted(group, current.endsAt);
    }
    this.windows.delete(group);
    if (!this.makeRoom(now)) return { granted: false, windowEndsAt: this.windows.values().next().value?.endsAt ?? now, refused: 'used_up' };
    const opened = { count: 1, endsAt: now + allowance.windowMs };
    this.windows.set(group, opened);
    return this.granted(group, opened.endsAt);
  }

  ended(group: string): void {
    const left = (this.underWay.get(group) ?? 1) - 1;
    if (left <= 0) this.underWay.delete(group);
    else this.underWay.set(group, left);
  }

  private granted(group: string, windowEndsAt: number): AddressReservation {
    this.underWay.set(group, (this.underWay.get(group) ?? 0) + 1);
    return { granted: true, windowEndsAt };
  }

  refund(group: string, windowEndsAt: number): void {
    const current = this.windows.get(group);
    if (current?.endsAt !== windowEndsAt) return;
    // A group with nothing counted needs no entry: the next attempt opens a window as good.
    if (current.count <= 1) this.windows.delete(group);
    else this.windows.set(group, { count: current.count - 1, endsAt: current.endsAt });
  }

  private makeRoom(now: number): boolean {
    for (const [group, window] of this.windows) {
      if (this.windows.size < this.maxGroups || window.endsAt > now) break;
      this.windows.delete(group);
    }
    return this.windows.size < this.maxGroups;
  }
}
