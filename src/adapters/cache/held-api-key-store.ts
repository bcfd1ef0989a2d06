import type { ChangeWatch } from '../../application/change-watch.js';
import type { ApiKeyStore } from '../../application/ports/api-key-store.js';
import type { Clock } from '../../application/ports/clock.js';
import type { Principal } from '../../domain/api-key.js';

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

/** Reads the key-set token from the shared store, reporting it to the watch; null when the store cannot be asked now. */
export interface KeySetVersionReader {
  keysVersion(): Promise<string | null>;
}

export interface HeldApiKeyStoreOptions {
  readonly watch: ChangeWatch;
  readonly versions: KeySetVersionReader;
  readonly clock: Clock;
  /**
   * The held keys are read again once older than this (CACHE_TTL_MS), whatever the tokens say:
   * the bound on staleness if a write commits but cannot announce itself.
   */
  readonly maxAgeMs: number;
}

interface Held {
  readonly byHash: ReadonlyMap<string, Principal>;
  readonly byKeyId: ReadonlyMap<string, Principal>;
  /** The watch's `keysSeq` when the read started: everything announced before it is in here. */
  readonly seq: number;
  readonly readAt: number;
}

/**
 * Every live key held in memory (keys are few), so a request authenticates without a database
 * read, and a well-formed key that is not live costs the database nothing. The set is read again
 * whenever the watch has seen the key-set token change, before the request is answered.
 *
 * While the shared store is unreachable the watch cannot be trusted, and every check goes to the
 * database, as it does without a shared store.
 */
export class HeldApiKeyStore implements ApiKeyStore {
  private held: Held | null = null;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly source: KeySetSource,
    private readonly options: HeldApiKeyStoreOptions,
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
    if (held === null) return this.checkAgain(principal);
    const live = held.byKeyId.get(principal.keyId);
    return Promise.resolve(live !== undefined && live.partnerId === principal.partnerId);
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
    if (held.seq >= watch.keysSeq) return null;
    return (await this.current()).byHash.get(sha256) ?? null;
  }

  private async checkAgain(principal: Principal): Promise<boolean> {
    if (!this.options.watch.isShared()) {
      // Read from the database on this request, unless it came from the held set before the
      // shared store was lost: then the held set may be stale, and the database decides.
      return this.held?.byKeyId.get(principal.keyId) !== principal || this.source.isLive(principal);
    }
    const held = await this.current();
    const live = held.byKeyId.get(principal.keyId);
    return live !== undefined && live.partnerId === principal.partnerId;
  }

  /** The held set when it can be trusted as it is: sharing, nothing seen since it was read, not too old. */
  private upToDate(): Held | null {
    return this.options.watch.isShared() ? this.fresh() : null;
  }

  /** The held set if it was read after every change the watch has seen, and is not too old. */
  private fresh(): Held | null {
    const { watch, clock, maxAgeMs } = this.options;
    const held = this.held;
    return held !== null && held.seq >= watch.keysSeq && clock.now() - held.readAt < maxAgeMs ? held : null;
  }

  /** The held set, read again first if the watch has seen a change since, or if it is too old. */
  private async current(): Promise<Held> {
    for (;;) {
      const held = this.fresh();
      if (held !== null) return held;
      // One read at a time; a request that needs a later one than the read in flight waits for
      // it, then starts its own.
      this.reading ??= this.read().finally(() => {
        this.reading = null;
      });
      await this.reading;
    }
  }

  private async read(): Promise<void> {
    // Taken before the read starts: every change announced up to now is committed, so in it.
    const seq = this.options.watch.keysSeq;
    const readAt = this.options.clock.now();
    const rows = await this.source.listLive();
    const byHash = new Map<string, Principal>();
    const byKeyId = new Map<string, Principal>();
    for (const row of rows) {
      const principal: Principal = { keyId: row.keyId, partnerId: row.partnerId };
      byHash.set(row.sha256, principal);
      byKeyId.set(row.keyId, principal);
    }
    if (this.held === null || seq >= this.held.seq) this.held = { byHash, byKeyId, seq, readAt };
  }
}
