/** Failed sign-ins and lockouts per email (normalized), shared by every instance that shares the storage. */
export interface SignInThrottle {
  /** When the email's lock ends, or null if it is not locked (an ended lock may still be returned). */
  lockedUntil(email: string): Promise<Date | null>;
  /** Records a failure and returns how many the email has had since `since`, this one included. */
  recordFailure(email: string, at: Date, since: Date): Promise<number>;
  /** Locks the email until `until` and forgets its failures. */
  lock(email: string, until: Date): Promise<void>;
  /** Forgets the email's failures and lock (after a successful sign-in). */
  clear(email: string): Promise<void>;
}
