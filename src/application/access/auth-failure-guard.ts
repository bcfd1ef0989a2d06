/**
 * Failed authentications counted per client address, so that one address flooding made-up keys
 * cannot take the service (or its database) away from everybody else.
 */
export interface AuthFailureGuard {
  /**
   * Whole seconds a request from `address` must wait before its key is checked, or 0 when it may be
   * checked now. A key that recently authenticated (`keyHash`) is never held back, so a partner
   * sharing an address with a flood keeps being served.
   */
  secondsToWait(address: string, keyHash: string | null): number;
  /** Counts one failed authentication from `address`. */
  failed(address: string): void;
  /** Remembers a key hash that just authenticated. */
  succeeded(keyHash: string): void;
}
