import type { ChangesElsewhere } from '../../application/instances/changes-elsewhere.js';
import type { ApiKeyStore } from '../../application/access/api-key-store.js';
import type { Clock } from '../../application/common/clock.js';
import type { AnnouncedKeyChanges } from '../../application/instances/change-versions.js';
import { isStorageUnavailable } from '../../application/common/storage-unavailable.js';
import { TIMEOUTS } from '../timeouts.js';
import { principalOf, type Principal } from '../../domain/api-key.js';
import { ServiceUnavailable } from '../../domain/errors.js';

/** A live key as read from storage: its owner and its hash, never the key. */
export interface LiveKeyRow extends Principal {
  readonly sha256: string;
}

/** The storage the held keys are read from. */
export interface KeySetSource extends ApiKeyStore {
  /** Every live key. */
  listLive(): Promise<readonly LiveKeyRow[]>;
  /** Whether the key is live now, read from storage. */
  isLive(principal: Principal): Promise<boolean>;
}

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
   * The held keys are read again once older than this (CACHE_TTL_MS), whatever the tokens say:
   * the bound on staleness if a write commits but cannot announce itself.
   */
  readonly maxAgeMs: number;
}

interface KeySet {
  readonly byHash: ReadonlyMap<string, Principal>;
  readonly byKeyId: ReadonlyMap<string, Principal>;
}

interface Held extends KeySet {
  /** The watch's `keysSeq` when the read started: everything announced before it is in here. */
  readonly seq: number;
  /** Until when it stands as it is (the clock's time). */
  readonly until: number;
  /**
   * Null when read from the database. Else it was made without it, from the last read and the
   * changes announced since: the hashes of the keys revoked since (withdrawn and not added again,
   * refused as any revoked key), and whether a key was added that only the database can tell.
   */
  readonly withoutDatabase: {
    readonly withdrawn: ReadonlySet<string>;
    /** Ids withdrawn and added again: their keys cannot be decided. */
    readonly undecided: ReadonlySet<string>;
    readonly keysAdded: boolean;
  } | null;
}

/**
 * Every live key held in memory (keys are few), so a request authenticates without a database
 * read, and a well-formed key that is not live costs the database nothing. The set is read again
 * whenever the watch has seen the key-set token change, before the request is answered.
 *
 * While the database cannot be read, a change is applied from what its announcement told: the
 * keys it withdrew are refused on the next request and every other held key keeps working; a key
 * the instance does not hold is refused as unknown unless a key was added meanwhile, when it cannot
 * be decided (503, ServiceUnavailable) until the database answers, which is tried again in the
 * background at most once a second.
 *
 * While the shared store is unreachable the watch cannot be trusted, and every check goes to the
 * database, as it does without a shared store.
 */
export class KeySetCache implements ApiKeyStore {
  private held: Held | null = null;
  /** The last set read from the database, and the shared store's mark taken before that read. */
  private lastRead: { readonly keys: KeySet; readonly mark: number | null } | null = null;
  private reading: Promise<void> | null = null;
  /** Until when a key set that could be made neither way is not tried again. */
  private undecidedUntil = -Infinity;

  constructor(
    private readonly source: KeySetSource,
    private readonly options: KeySetCacheOptions,
  ) {}

  /** Reads the key set now, so the first request does not wait for it. */
  async warm(): Promise<void> {
    await this.current();
  }

  findActiveByHash(sha256: string): Promise<Principal | null> {
    // The common case answers without an async step: a held key, with nothing to re-read.
    const principal = this.upToDate()?.byHash.get(sha256);
    return principal === undefined ? this.findNotHeld(sha256) : Promise.resolve(principal);
  }

  isStillActive(principal: Principal): Promise<boolean> {
    const held = this.upToDate();
    // A set made without the database may not decide it: the slower path answers that as a refusal.
    if (held === null || held.withoutDatabase !== null) return this.checkAgain(principal);
    return Promise.resolve(stillActive(held, principal));
  }

  private async findNotHeld(sha256: string): Promise<Principal | null> {
    const { watch, versions } = this.options;
    if (!watch.isShared()) return this.source.findActiveByHash(sha256);
    const held = await this.current();
    const principal = held.byHash.get(sha256);
    if (principal !== undefined) return principal;
    // Not held: it may have been issued a moment ago through another instance or the CLI.
    // One read of the token decides; the database is read only if the token changed.
    const token = await versions.keysVersion();
    if (token === null || !watch.isShared()) return this.source.findActiveByHash(sha256);
    const latest = held.seq >= watch.keysSeq ? held : await this.current();
    return latest.byHash.get(sha256) ?? notHeld(latest, sha256);
  }

  private async checkAgain(principal: Principal): Promise<boolean> {
    if (!this.options.watch.isShared()) {
      // Read from the database on this request, unless it came from the held set before the
      // shared store was lost: then the held set may be stale, and the database decides.
      return this.held?.byKeyId.get(principal.keyId) !== principal || this.source.isLive(principal);
    }
    return stillActive(await this.current(), principal);
  }

  /** The held set when it can be trusted as it is: sharing, nothing seen since it was read, not too old. */
  private upToDate(): Held | null {
    return this.options.watch.isShared() ? this.fresh() : null;
  }

  /** The held set if it was read after every change the watch has seen, and stands still. */
  private fresh(): Held | null {
    const { watch, clock } = this.options;
    const held = this.held;
    return held !== null && held.seq >= watch.keysSeq && clock.now() < held.until ? held : null;
  }

  /** The held set, read again first if the watch has seen a change since, or if it is too old. */
  private async current(): Promise<Held> {
    for (;;) {
      const held = this.fresh();
      if (held !== null) return held;
      const stale = this.held;
      if (stale !== null && stale.withoutDatabase !== null && stale.seq >= this.options.watch.keysSeq) {
        // Made without the database and nothing announced since: it answers while the database is
        // tried again in the background.
        this.readOnce().catch(() => undefined);
        return stale;
      }
      if (this.options.clock.now() < this.undecidedUntil) throw undecided();
      await this.readOnce();
    }
  }

  /** One read at a time; a request that needs a later one than the read in flight waits for it, then starts its own. */
  private readOnce(): Promise<void> {
    this.reading ??= this.read().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    const { watch, versions, clock, maxAgeMs } = this.options;
    // Taken before the read starts: every change announced up to now is committed, so in it.
    const seq = watch.keysSeq;
    const startedAt = clock.now();
    const mark = watch.isShared() ? await versions.keyChangesMark() : null;
    let rows: readonly LiveKeyRow[];
    try {
      rows = await this.source.listLive();
    } catch (error) {
      if (!isStorageUnavailable(error)) throw error;
      const made = await this.withoutDatabase(seq);
      if (made === null) {
        this.undecidedUntil = clock.now() + TIMEOUTS.keySetRetryMs;
        throw undecided();
      }
      this.keep(made);
      return;
    }
    const byHash = new Map<string, Principal>();
    const byKeyId = new Map<string, Principal>();
    for (const row of rows) {
      const principal = principalOf(row.keyId, row.partnerId, row.mode);
      byHash.set(row.sha256, principal);
      byKeyId.set(row.keyId, principal);
    }
    this.lastRead = { keys: { byHash, byKeyId }, mark };
    this.keep({ byHash, byKeyId, seq, until: startedAt + maxAgeMs, withoutDatabase: null });
  }

  private keep(held: Held): void {
    if (this.held === null || held.seq >= this.held.seq) this.held = held;
  }

  /** The last set read, less the keys withdrawn since, as the shared store tells them; null if it cannot. */
  private async withoutDatabase(seq: number): Promise<Held | null> {
    const { watch, versions, clock } = this.options;
    const last = this.lastRead;
    if (last === null || last.mark === null || !watch.isShared()) return null;
    const changes = await versions.keyChangesSince(last.mark);
    if (changes === null) return null;
    const byHash = new Map<string, Principal>();
    const byKeyId = new Map<string, Principal>();
    const withdrawn = new Set<string>();
    const undecided = new Set<string>();
    for (const [sha256, principal] of last.keys.byHash) {
      if (changes.withdrawn.has(principal.keyId)) {
        // Withdrawn alone, it is revoked. Added again too, it may live on under this hash for another
        // partner, or only under another hash: it cannot be decided.
        if (changes.added.has(principal.keyId)) undecided.add(principal.keyId);
        else withdrawn.add(sha256);
        continue;
      }
      byHash.set(sha256, principal);
      byKeyId.set(principal.keyId, principal);
    }
    return { byHash, byKeyId, seq, until: clock.now() + TIMEOUTS.keySetRetryMs, withoutDatabase: { withdrawn, undecided, keysAdded: changes.added.size > 0 } };
  }
}

/** Whether the principal's key is live in the held set; it cannot be decided if the set was made without the database after its key changed. */
function stillActive(held: Held, principal: Principal): boolean {
  const live = held.byKeyId.get(principal.keyId);
  if (live === undefined && held.withoutDatabase?.undecided.has(principal.keyId) === true) throw cannotCheck();
  return live !== undefined && live.catalogId === principal.catalogId;
}

/** A key not in the held set: unknown, unless the set was made without the database after a key was added. */
function notHeld(held: Held, sha256: string): null {
  const without = held.withoutDatabase;
  if (without !== null && without.keysAdded && !without.withdrawn.has(sha256)) throw cannotCheck();
  return null;
}

function cannotCheck(): ServiceUnavailable {
  return new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds, 'Keys changed while the service cannot reach its database, and this one cannot be checked until it can');
}

function undecided(): ServiceUnavailable {
  return new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds, 'The service cannot reach its database to check API keys');
}
