import { positionIn, type ChangePositions } from './change-versions.js';

/**
 * What this instance has learned of changes made elsewhere, from the version tokens that each
 * request's round trip to the shared store reads with its count (docs/several-instances.md). It does no I/O: the shared
 * store's adapter reports what it read, and the key set and the response cache ask what they
 * must re-read.
 *
 * - `keysSeen` counts every change of the key-set token; the key set held in memory records the
 *   count it was read at, and is re-read while that is behind.
 * - A partner's catalog token is part of the key its cached answers are held under (as a number the
 *   cache makes anew each time the token moves), so a new token makes the old answers unreachable at
 *   once, and so does an old token coming back.
 * - While the shared store is unreachable (`isShared()` false), no change can be seen here: keys are
 *   read from the database, and so, on MySQL, are the catalogs' versions the answers are held under
 *   (CachedProductCatalog, CatalogVersions). `epoch` changes when the store returns, so nothing
 *   cached before or during an outage is served after it: an instance cannot know what it missed.
 * - A request whose read of the tokens was given up (`versionsMissed`) saw no change: the key set is
 *   read again before it is answered, and its partner's answers are read from the database until a
 *   token is seen again.
 * - With `positions`, every new token's database position is told on, for reads from replicas; and
 *   so is every time a change may have gone unseen.
 */
export class ChangesElsewhere {
  private keysToken: string | undefined;
  private keysChanges = 0;
  private epochCount = 0;
  private sharing = true;
  private readonly catalogTokens = new Map<string, string>();
  /** Partners whose last read of their token was given up: not cached from until one is seen. */
  private readonly unsure = new Set<string>();

  constructor(private readonly positions?: ChangePositions) {}

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
    this.positionOf(token);
  }

  catalogSeen(partnerId: string, token: string): void {
    if (this.catalogTokens.get(partnerId) !== token) {
      this.catalogTokens.set(partnerId, token);
      this.positionOf(token);
    }
    if (this.unsure.size > 0) this.unsure.delete(partnerId);
  }

  /** Tells the positions of a token seen for the first time. */
  private positionOf(token: string): void {
    if (this.positions === undefined) return;
    const position = positionIn(token);
    if (position === null) this.positions.unknown();
    else this.positions.seen(position);
  }

  /**
   * The partner's catalog token to hold answers under: while sharing, the last one seen, or undefined
   * when none is to be trusted; while the store is lost, the last one seen (or undefined), since
   * answers then live by their TTL alone.
   */
  catalogToken(partnerId: string): string | undefined {
    if (this.sharing && this.unsure.has(partnerId)) return undefined;
    return this.catalogTokens.get(partnerId);
  }

  /** A request's read of the tokens was given up (the store was slow): what it would have seen is read again. */
  versionsMissed(partnerId: string | undefined): void {
    this.keysChanges += 1;
    if (partnerId !== undefined) this.unsure.add(partnerId);
    this.positions?.unknown();
  }

  /**
   * The shared store stopped answering: keys are read from the database from now on. Answers held
   * stay, each until its TTL ends, under the token last seen.
   */
  sharingLost(): void {
    if (!this.sharing) return;
    this.sharing = false;
    this.keysChanges += 1;
  }

  /** The shared store answers again: everything held is re-read, since what was missed is unknown. */
  sharingRegained(): void {
    if (this.sharing) return;
    this.sharing = true;
    this.forgetAll();
    this.positions?.unknown();
  }

  /**
   * The key set reads the changes made since it last did, once, whatever the key-set token says next:
   * a Redis that switched may hand back a token seen before the change it lost. The last token is
   * kept; a different one after the return only reads the changes once more.
   */
  private forgetAll(): void {
    this.epochCount += 1;
    this.keysChanges += 1;
    this.catalogTokens.clear();
    this.unsure.clear();
  }
}
