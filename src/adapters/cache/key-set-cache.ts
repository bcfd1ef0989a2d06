import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import type { ApiKeyStore } from '../../application/access/api-key-store.js';
import type { KeyChangesRead, KeySetSource, LiveKeyRow } from '../../application/access/key-set-source.js';
import type { Clock } from '../../application/common/clock.js';
import type { AnnouncedKeyChanges } from '../../application/instances/change-versions.js';
import { isStorageUnavailable } from '../../application/common/storage-unavailable.js';
import { TIMEOUTS } from '../timeouts.js';
import type { Principal } from '../../domain/api-key.js';
import { KeyTable } from './key-table.js';
import { ServiceUnavailable } from '../../domain/errors.js';

/**
 * What the held keys read from the shared store: the key-set token (reported to the watch), and
 * the key changes announced with it, for when the database cannot be read. Each is null when the
 * store cannot be asked now.
 */
export interface KeySetVersionReader {
  keysVersion(): Promise<string | null>;
  /** A mark on the shared store's clock: a change announced before it is in a key set read after it. */
  keyChangesMark(): Promise<number | null>;
  /** The key changes announced at or after the mark; null when they cannot all be told. */
  keyChangesSince(mark: number): Promise<AnnouncedKeyChanges | null>;
}

export interface KeySetCacheOptions {
  readonly watch: ChangesElsewhere;
  readonly versions: KeySetVersionReader;
  readonly clock: Clock;
  /**
   * Once the held keys were last brought up to date longer ago than this (CACHE_TTL_MS), the changes
   * since are read in the background, whatever the tokens say: the bound on staleness if a write
   * commits but cannot announce itself.
   */
  readonly maxAgeMs: number;
}

/**
 * What the announcements made since the last read of the database tell, while it cannot be read:
 * keys withdrawn (refused as revoked), keys withdrawn and added again (undecided), and whether any
 * key was added (then a key not held cannot be decided).
 */
interface WithoutDatabase {
  readonly withdrawn: ReadonlySet<string>;
  readonly undecided: ReadonlySet<string>;
  readonly keysAdded: boolean;
  /** The database is not tried again before this (the clock's time). */
  readonly until: number;
}

/**
 * Every live key held in memory, so a request authenticates without a database read, and a
 * well-formed key that is not live costs the database nothing (docs/several-instances.md).
 *
 * - **Read whole once, at start** (`load`), page by page with no deadline on the whole; until it is
 *   held, `isLoaded()` is false (the instance is not ready) and each request reads its key from the
 *   database, as without a shared store.
 * - **Kept by what changed.** Every key change takes the next number of the database's key-change
 *   counter and stamps it on the rows it wrote; the set records the last number it applied, and is
 *   brought up to date by reading the rows changed after it: one small read per change, never every key.
 * - **When.** Before a request is answered, whenever the watch has seen the key-set token change (a
 *   change announced, a read of the token given up, the shared store back after a loss). Besides,
 *   once the set was last brought up to date longer ago than `maxAgeMs`, in the background: a held key
 *   is answered at once meanwhile, a key not held waits for that read (it may have been issued unannounced).
 * - **While the shared store is unreachable** the watch cannot be trusted: every check goes to the database.
 * - **While the database cannot be read**, a change is applied from what its announcement told: the
 *   keys it withdrew are refused on the next request and every other held key keeps working; a key not
 *   held is refused as unknown unless a key was added meanwhile, when it cannot be decided (503,
 *   ServiceUnavailable) until the database answers, which is tried again in the background at most
 *   once a second.
 */
export class KeySetCache implements ApiKeyStore {
  /** Null until the whole set was read once. */
  private keys: HeldKeys | null = null;
  /** The last key change applied: every change up to it is in `keys`. */
  private applied = 0;
  /** The watch's `keysSeq` when the last update started: everything announced before it is in. */
  private seq = -1;
  /** When the changes since are next read in the background (the clock's time). */
  private until = -Infinity;
  /** The shared store's mark taken before the last update that read the database; null if none could be. */
  private mark: number | null = null;
  private withoutDatabase: WithoutDatabase | null = null;
  private updating: Promise<void> | null = null;
  /** Until when an update that could be made neither way is not tried again. */
  private undecidedUntil = -Infinity;
  /** Until when a background update that failed is not tried again. */
  private retryAt = -Infinity;
  private loading: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly source: KeySetSource,
    private readonly options: KeySetCacheOptions,
  ) {}

  /** Whether the whole set has been read: until then each request reads its key from the database. */
  isLoaded(): boolean {
    return this.keys !== null;
  }

  /** How many live keys are held. */
  size(): number {
    return this.keys?.size ?? 0;
  }

  /**
   * Reads the whole set, trying again every `TIMEOUTS.keySetRetryMs` while it fails (each failure told
   * to `onFailure`), until it is held or the cache is closed. One load at a time.
   */
  load(onFailure: (error: unknown) => void = () => undefined): Promise<void> {
    this.loading ??= this.loadUntilHeld(onFailure);
    return this.loading;
  }

  /** Stops trying to load. */
  close(): void {
    this.closed = true;
  }

  findActiveByHash(sha256: string): Promise<Principal | null> {
    // The common case answers without an async step: a held key, with nothing to read first.
    const keys = this.upToDate();
    const principal = keys?.byHash(sha256);
    return principal === undefined ? this.findNotHeld(sha256) : Promise.resolve(principal);
  }

  isStillActive(principal: Principal): Promise<boolean> {
    const keys = this.upToDate();
    // Applied without the database, the set may not decide it: the slower path answers that as a refusal.
    if (keys === null) return this.checkAgain(principal);
    return Promise.resolve(keys.isLive(principal));
  }

  private async findNotHeld(sha256: string): Promise<Principal | null> {
    const { watch, versions } = this.options;
    if (!watch.isShared() || this.keys === null) return this.source.findActiveByHash(sha256);
    let keys = await this.current({ waitIfOld: true });
    const principal = this.liveHeld(keys, sha256);
    if (principal !== undefined) return principal;
    // Not held: it may have been issued a moment ago through another instance or the CLI.
    // One read of the token decides; the database is read only if the token changed.
    const token = await versions.keysVersion();
    if (token === null || !watch.isShared()) return this.source.findActiveByHash(sha256);
    if (this.seq < watch.keysSeq) keys = await this.current({ waitIfOld: false });
    return this.liveHeld(keys, sha256) ?? this.notHeld(sha256);
  }

  private async checkAgain(principal: Principal): Promise<boolean> {
    if (!this.options.watch.isShared() || this.keys === null) {
      // Read from the database on this request, unless it came from the held set before the shared
      // store was lost: then the held set may be stale, and the database decides.
      return this.keys?.principalOf(principal.keyId) !== principal || this.source.isLive(principal);
    }
    const keys = await this.current({ waitIfOld: false });
    const without = this.withoutDatabase;
    if (without !== null) {
      if (without.undecided.has(principal.keyId)) throw cannotCheck();
      if (without.withdrawn.has(principal.keyId)) return false;
    }
    return keys.isLive(principal);
  }

  /** A held key's principal, unless a change announced while the database cannot be read withdrew it. */
  private liveHeld(keys: HeldKeys, sha256: string): Principal | undefined {
    const principal = keys.byHash(sha256);
    const without = this.withoutDatabase;
    if (principal === undefined || without === null) return principal;
    if (without.undecided.has(principal.keyId)) throw cannotCheck();
    return without.withdrawn.has(principal.keyId) ? undefined : principal;
  }

  /** A key not held: unknown, unless a key was added while the database cannot be read. */
  private notHeld(sha256: string): null {
    const without = this.withoutDatabase;
    if (without !== null && without.keysAdded && this.keys?.byHash(sha256) === undefined) throw cannotCheck();
    return null;
  }

  /**
   * The held set when it can be trusted as it is, with no async step: sharing, nothing seen since it
   * was brought up to date, read from the database. An old one starts a read of the changes in the background.
   */
  private upToDate(): HeldKeys | null {
    const { watch, clock } = this.options;
    const keys = this.keys;
    if (keys === null || !watch.isShared() || this.seq < watch.keysSeq || this.withoutDatabase !== null) return null;
    if (clock.now() >= this.until) this.updateInBackground();
    return keys;
  }

  /**
   * The held set brought up to date with every change the watch has seen: read again first if it has
   * seen one since. With `waitIfOld`, an old set is brought up to date first too.
   */
  private async current(options: { readonly waitIfOld: boolean }): Promise<HeldKeys> {
    const { watch, clock } = this.options;
    for (;;) {
      const keys = this.keys;
      if (keys === null) throw new Error('the key set is read before it was loaded');
      if (this.seq >= watch.keysSeq) {
        const without = this.withoutDatabase;
        // Applied without the database and nothing announced since: it answers while the database is tried again in the background.
        if (without !== null) {
          if (clock.now() >= without.until) this.updateInBackground();
          return keys;
        }
        if (clock.now() < this.until) return keys;
        if (!options.waitIfOld) {
          this.updateInBackground();
          return keys;
        }
      }
      if (clock.now() < this.undecidedUntil) throw undecided();
      await this.updateOnce();
    }
  }

  /** Starts an update no request waits for; after one that failed, not again before `TIMEOUTS.keySetRetryMs`. */
  private updateInBackground(): void {
    if (this.updating !== null || this.options.clock.now() < this.retryAt) return;
    this.updateOnce().catch(() => {
      this.retryAt = this.options.clock.now() + TIMEOUTS.keySetRetryMs;
    });
  }

  /** One update at a time; a request that needs a later one than the update in flight waits for it, then starts its own. */
  private updateOnce(): Promise<void> {
    this.updating ??= this.update().finally(() => {
      this.updating = null;
    });
    return this.updating;
  }

  /** Reads the keys changed since the last change applied, and applies them. */
  private async update(): Promise<void> {
    const { watch, versions, clock, maxAgeMs } = this.options;
    const keys = this.keys;
    if (keys === null) return;
    // Taken before the read starts: every change announced up to now is committed, so in it.
    const seq = watch.keysSeq;
    const startedAt = clock.now();
    const mark = watch.isShared() ? await versions.keyChangesMark() : null;
    let changes: KeyChangesRead;
    try {
      changes = await this.source.keysChangedAfter(this.applied);
    } catch (error) {
      if (!isStorageUnavailable(error)) throw error;
      const without = await this.fromAnnouncements();
      if (without === null) {
        this.undecidedUntil = clock.now() + TIMEOUTS.keySetRetryMs;
        throw undecided();
      }
      this.withoutDatabase = without;
      this.seq = Math.max(this.seq, seq);
      return;
    }
    for (const row of changes.rows) keys.apply(row, row.live);
    this.applied = Math.max(this.applied, changes.through);
    this.mark = mark;
    this.withoutDatabase = null;
    this.seq = Math.max(this.seq, seq);
    this.until = startedAt + maxAgeMs;
  }

  /** What the announcements since the last read of the database tell; null if they cannot tell it all. */
  private async fromAnnouncements(): Promise<WithoutDatabase | null> {
    const { watch, versions, clock } = this.options;
    if (this.mark === null || !watch.isShared()) return null;
    const changes = await versions.keyChangesSince(this.mark);
    if (changes === null) return null;
    const withdrawn = new Set<string>();
    const undecided = new Set<string>();
    // Withdrawn alone, a key is revoked. Added again too, it may live on under its hash for another
    // partner, or only under another hash: it cannot be decided.
    for (const keyId of changes.withdrawn) (changes.added.has(keyId) ? undecided : withdrawn).add(keyId);
    return { withdrawn, undecided, keysAdded: changes.added.size > 0, until: clock.now() + TIMEOUTS.keySetRetryMs };
  }

  private async loadUntilHeld(onFailure: (error: unknown) => void): Promise<void> {
    while (this.keys === null && !this.closed) {
      try {
        await this.loadOnce();
      } catch (error) {
        onFailure(error);
        await new Promise((resolve) => setTimeout(resolve, TIMEOUTS.keySetRetryMs).unref());
      }
    }
  }

  /** The whole set, read page by page, then the changes made while it was read. */
  private async loadOnce(): Promise<void> {
    const { watch, versions, clock, maxAgeMs } = this.options;
    const seq = watch.keysSeq;
    const startedAt = clock.now();
    const mark = watch.isShared() ? await versions.keyChangesMark() : null;
    let loaded = new HeldKeys();
    const through = await this.source.readLiveKeys(() => {
      loaded = new HeldKeys();
      return (page) => {
        for (const row of page) loaded.apply(row, true);
      };
    });
    const changes = await this.source.keysChangedAfter(through);
    for (const row of changes.rows) loaded.apply(row, row.live);
    if (this.keys !== null) return;
    this.keys = loaded;
    this.applied = changes.through;
    this.mark = mark;
    this.seq = seq;
    this.until = startedAt + maxAgeMs;
  }
}

/** The live keys, by hash and by key id, as the last changes applied left them. */
class HeldKeys {
  private readonly table = new KeyTable();

  get size(): number {
    return this.table.size;
  }

  byHash(sha256: string): Principal | undefined {
    return this.table.get(sha256);
  }

  principalOf(keyId: string): Principal | undefined {
    return this.table.getById(keyId);
  }

  /** Whether the principal's key is live for the principal's catalog. */
  isLive(principal: Principal): boolean {
    return this.table.getById(principal.keyId)?.catalogId === principal.catalogId;
  }

  /** A key as its latest change left it: held under its hash if live, let go of if not. */
  apply(row: LiveKeyRow, live: boolean): void {
    if (live) this.table.set(row.keyId, row.partnerId, row.mode, row.sha256);
    else this.table.delete(row.keyId);
  }
}

function cannotCheck(): ServiceUnavailable {
  return new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds, 'Keys changed while the service cannot reach its database, and this one cannot be checked until it can');
}

function undecided(): ServiceUnavailable {
  return new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds, 'The service cannot reach its database to check API keys');
}
