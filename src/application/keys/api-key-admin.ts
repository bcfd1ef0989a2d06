import type { KeyMode } from '../../domain/api-key.js';
import type { KeyChanges } from '../instances/change-versions.js';

/** One of a partner's keys as an admin sees it: never a key, never a hash. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly partnerId: string;
  readonly mode: KeyMode;
  readonly label: string | null;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
  /** As last written by an instance's usage flush (at most a minute behind); null if never used since. */
  readonly lastUsedAt: Date | null;
}

/** A key about to be stored: only its hash. */
export interface NewApiKey {
  readonly id: string;
  readonly partnerId: string;
  readonly mode: KeyMode;
  readonly sha256: string;
  readonly label: string | null;
  readonly createdAt: Date;
}

/** Where keys are issued, revoked and listed; the rules are the use cases', this only stores. */
export interface ApiKeyAdmin {
  partnerExists(partnerId: string): Promise<boolean>;
  insert(key: NewApiKey): Promise<void>;
  find(keyId: string): Promise<ApiKeyRecord | null>;
  /** The partner's keys, oldest first. */
  list(partnerId: string): Promise<ApiKeyRecord[]>;
  /** Revokes the key if it is live; returns its revocation time (the first one if it was revoked already), or null for no such key. */
  revoke(keyId: string, at: Date): Promise<Date | null>;
  /** In one step: revokes `keyId` if it is live, and only then stores `replacement`. False, with nothing changed, if it was not live. */
  replace(keyId: string, replacement: NewApiKey): Promise<boolean>;
  /** Writes when keys were last used, in one batch; a time older than the stored one is ignored. */
  saveLastUsed(uses: readonly { readonly keyId: string; readonly at: Date }[]): Promise<void>;
}

/** Tells every running instance that the key set changed, and how, once the change has committed. */
export interface KeyChangeAnnouncer {
  keysChanged(changes: KeyChanges): Promise<void>;
}
