/** Failed sign-ins and lockouts per email (normalized), shared by every instance that shares the storage. */
export interface SignInThrottle {
  /** When the email's lock ends, or null if it is not locked (an ended lock may still be returned). */
  lockedUntil(email: string): Promise<Date | null>;
  /**
   * Records a failure and returns how many the email has had since `since`, this one included; or
   * 'full', recording nothing, when the email has no failures counted and there is no room for one
   * more email without forgetting a live failure or lock (a store bounded in size; never MySQL).
   */
  recordFailure(email: string, at: Date, since: Date): Promise<number | 'full'>;
  /**
   * Locks the email until `until` and forgets its failures. Never refused: the lock takes the failures'
   * place. The lock is in place before the failures are gone: SignIn reads it after counting, so an
   * attempt counted afresh once they are gone finds it.
   */
  lock(email: string, until: Date): Promise<void>;
  /** Forgets the email's failures and lock (after a successful sign-in). */
  clear(email: string): Promise<void>;
  /** Forgets every failure not after `since` and every lock ended by `now`: they no longer count. */
  prune(since: Date, now: Date): Promise<void>;
}
