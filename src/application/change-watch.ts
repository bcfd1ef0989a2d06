/**
 * What this instance has learned of changes made elsewhere, from the version tokens that the
 * rate-limit step reads on every request (docs/several-instances.md). It does no I/O: the shared
 * store's adapter reports what it read, and the key set and the response cache ask what they
 * must re-read.
 *
 * - `keysSeen` counts every change of the key-set token; the key set held in memory records the
 *   count it was read at, and is re-read while that is behind.
 * - A partner's catalog token is part of the key its cached answers are held under, so a new token
 *   makes the old answers unreachable at once.
 * - While the shared store is unreachable (`isShared()` false), nothing here can be trusted: readers go
 *   to the database. `epoch` changes on every loss and every return, so nothing cached before or
 *   during an outage is served after it: an instance cannot know what it missed.
 */
export class ChangeWatch {
  private keysToken: string | undefined;
  private keysChanges = 0;
  private epochCount = 0;
  private sharing = true;
  private readonly catalogTokens = new Map<string, string>();

  /** Whether tokens are being read from the shared store right now. */
  isShared(): boolean {
    return this.sharing;
  }

  /** Grows with every change of the key-set token seen, and on every return of the shared store. */
  get keysSeq(): number {
    return this.keysChanges;
  }

  /** Changes on every loss and return of the shared store. */
  get epoch(): number {
    return this.epochCount;
  }

  keysSeen(token: string): void {
    if (token === this.keysToken) return;
    this.keysToken = token;
    this.keysChanges += 1;
  }

  catalogSeen(partnerId: string, token: string): void {
    this.catalogTokens.set(partnerId, token);
  }

  /** The partner's catalog token last seen, or undefined when none is to be trusted. */
  catalogToken(partnerId: string): string | undefined {
    return this.sharing ? this.catalogTokens.get(partnerId) : undefined;
  }

  /** The shared store stopped answering: from now on, read the database. */
  sharingLost(): void {
    if (!this.sharing) return;
    this.sharing = false;
    this.forgetAll();
  }

  /** The shared store answers again: everything held is re-read, since what was missed is unknown. */
  sharingRegained(): void {
    if (this.sharing) return;
    this.sharing = true;
    this.forgetAll();
  }

  /**
   * The key set is read again once; the last key-set token is kept, since a token never comes back:
   * the same token after the outage means no write was announced meanwhile.
   */
  private forgetAll(): void {
    this.epochCount += 1;
    this.keysChanges += 1;
    this.catalogTokens.clear();
  }
}
