import type { KeyMode, Principal } from '../../domain/api-key.js';
import type { ApiKeyStore } from './api-key-store.js';

/** A live key as read from storage: its owner, its mode and its hash, never the key. */
export interface LiveKeyRow {
  readonly keyId: string;
  readonly partnerId: string;
  readonly mode: KeyMode;
  readonly sha256: string;
}

/** A key as its latest change left it: live (perhaps under a new hash or partner), or no longer. */
export interface ChangedKeyRow extends LiveKeyRow {
  readonly live: boolean;
}

/** The keys changed after a key change, and the key change they bring a held set up to. */
export interface KeyChangesRead {
  readonly rows: readonly ChangedKeyRow[];
  /** Every change up to this one is among the rows (or no later than the one asked after). */
  readonly through: number;
}

/**
 * Storage as an instance that holds every live key reads it: whole once, then by what changed.
 * Every key change takes the next number of one counter, in the order changes commit.
 */
export interface KeySetSource extends ApiKeyStore {
  /**
   * Every live key, page by page, into a sink `open` makes (made again if the read starts over, on
   * another server); resolves to a key change every key read reflects, at least.
   */
  readLiveKeys(open: () => (page: readonly LiveKeyRow[]) => void): Promise<number>;
  /** Every key changed after the key change `after`, live or not: a read that grows with what changed. */
  keysChangedAfter(after: number): Promise<KeyChangesRead>;
  /** Whether the key is live now, read from storage. */
  isLive(principal: Principal): Promise<boolean>;
}
