import type { ApiKeyAdmin } from '../keys/api-key-admin.js';
import type { Clock } from '../common/clock.js';

/** How often an instance writes the times its keys were last used: "last used" is at most this far behind. */
export const KEY_USAGE_FLUSH_MS = 60_000;

/** Where an authenticated request reports its key: a call in memory, never a storage write. */
export interface KeyUsage {
  used(keyId: string): void;
}

/**
 * Distinct keys one flush may hold. Only authenticated keys are recorded, so the key count bounds it
 * first; this bound is for memory alone (about 40 bytes a key, 40 MB at the bound), ten times the
 * 100,000 keys a minute the service is sized for, so no key of such a minute is ever dropped.
 */
export const KEY_USAGE_MAX_KEYS = 1_000_000;

/** Uses handed to the store at a time by a flush: the dated copy of a full map would weigh four times the map. */
export const KEY_USAGE_FLUSH_SLICE = 100_000;

/**
 * When each key was last used on this instance since the last flush, written once a minute
 * (`flush`), so "last used" never costs a database write per request. The map is bounded: a key
 * first seen past the bound waits for a use after the next flush.
 */
export class KeyUsageRecorder implements KeyUsage {
  private pending = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly maxKeys = KEY_USAGE_MAX_KEYS,
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

  /** Writes what was seen since the last flush; on failure all of it is kept for the next one (a time written twice stays the same). */
  async flush(store: Pick<ApiKeyAdmin, 'saveLastUsed'>): Promise<number> {
    const batch = this.pending;
    if (batch.size === 0) return 0;
    this.pending = new Map();
    try {
      let slice: { keyId: string; at: Date }[] = [];
      for (const [keyId, at] of batch) {
        slice.push({ keyId, at: new Date(at) });
        if (slice.length < KEY_USAGE_FLUSH_SLICE) continue;
        await store.saveLastUsed(slice);
        slice = [];
      }
      if (slice.length > 0) await store.saveLastUsed(slice);
      return batch.size;
    } catch (error) {
      for (const [keyId, at] of batch) if ((this.pending.get(keyId) ?? 0) < at) this.pending.set(keyId, at);
      throw error;
    }
  }
}
