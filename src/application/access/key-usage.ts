import type { ApiKeyAdmin } from '../keys/api-key-admin.js';
import type { Clock } from '../common/clock.js';

/** How often an instance writes the times its keys were last used: "last used" is at most this far behind. */
export const KEY_USAGE_FLUSH_MS = 60_000;

/** Where an authenticated request reports its key: a call in memory, never a storage write. */
export interface KeyUsage {
  used(keyId: string): void;
}

/**
 * When each key was last used on this instance since the last flush, written in one batch a
 * minute (`flush`), so "last used" never costs a database write per request. Keys are few, so
 * the map stays small; it is bounded all the same.
 */
export class KeyUsageRecorder implements KeyUsage {
  private pending = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly maxKeys = 100_000,
  ) {}

  used(keyId: string): void {
    if (this.pending.size >= this.maxKeys && !this.pending.has(keyId)) return;
    this.pending.set(keyId, this.clock.now());
  }

  /** A use seen here and not written yet, so this instance's own listing is never behind. */
  unwritten(keyId: string): Date | null {
    const at = this.pending.get(keyId);
    return at === undefined ? null : new Date(at);
  }

  /** Writes what was seen since the last flush; on failure it is kept for the next one. */
  async flush(store: Pick<ApiKeyAdmin, 'saveLastUsed'>): Promise<number> {
    const batch = this.pending;
    if (batch.size === 0) return 0;
    this.pending = new Map();
    try {
      await store.saveLastUsed([...batch].map(([keyId, at]) => ({ keyId, at: new Date(at) })));
      return batch.size;
    } catch (error) {
      for (const [keyId, at] of batch) if ((this.pending.get(keyId) ?? 0) < at) this.pending.set(keyId, at);
      throw error;
    }
  }
}
