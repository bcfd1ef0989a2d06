import type { AttemptAllowance } from '../../domain/admin.js';

/** A granted attempt is counted in the window that ends at `windowEndsAt`; a refused one may try again then. */
export interface AddressReservation {
  readonly granted: boolean;
  readonly windowEndsAt: number;
  /** Why it was refused: the window's attempts are used up, or the address has `atOnce` attempts under way. */
  readonly refused?: 'used_up' | 'at_once';
}

/**
 * Sign-in attempts per client address group (`addressGroup`), counted in this process only: it
 * guards this process's hashing, and no store is asked before an attempt is let through.
 */
export interface SignInAddressBudget {
  /**
   * Counts one attempt of `group` against the allowance, whose window starts with the group's first
   * attempt. Refused when the window's attempts are used up, when there is no room to count one
   * more group without forgetting one whose window is still open, or when the group has
   * `allowance.atOnce` granted attempts not yet `ended`.
   */
  reserve(group: string, now: number, allowance: AttemptAllowance): AddressReservation;
  /** A granted attempt is over, whatever its outcome (called once for each granted reservation). */
  ended(group: string): void;
  /** Gives back an attempt counted in the window that ends at `windowEndsAt`; nothing if that window is over. */
  refund(group: string, windowEndsAt: number): void;
}
