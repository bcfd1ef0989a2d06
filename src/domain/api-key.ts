import { hash, randomInt } from 'node:crypto';
import { sandboxCatalogOf } from './sandbox.js';

/** Live keys read a partner's catalog; test keys read its sandbox and nothing else (docs/api.md, test keys). */
export type KeyMode = 'live' | 'test';
export const KEY_MODES: readonly KeyMode[] = ['live', 'test'];

export const API_KEY_PREFIXES: Readonly<Record<KeyMode, string>> = { live: 'pcat_live_', test: 'pcat_test_' };
const API_KEY_PATTERN = /^pcat_(live|test)_[A-Za-z0-9]{32,64}$/;
const ISSUED_KEY_RANDOM_LENGTH = 40;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Whether a presented key has the issued shape; a key of another shape is never looked up. */
export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** The mode a key's prefix names; only for a well-formed key. */
export function modeOfKey(key: string): KeyMode {
  return key.startsWith(API_KEY_PREFIXES.test) ? 'test' : 'live';
}

/** The only form in which a key is ever stored: lowercase hex SHA-256 of the whole key. */
export function hashApiKey(key: string): string {
  // The one-shot hash: half the CPU of createHash().update().digest(), and it runs on every request.
  return hash('sha256', key, 'hex');
}

/** A fresh key: its mode's prefix and 40 uniformly random base62 characters (over 230 bits). */
export function generateApiKey(mode: KeyMode = 'live'): string {
  let random = '';
  for (let i = 0; i < ISSUED_KEY_RANDOM_LENGTH; i += 1) random += BASE62.charAt(randomInt(BASE62.length));
  return API_KEY_PREFIXES[mode] + random;
}

/** Who a request acts for, once its key is known. */
export interface Principal {
  readonly keyId: string;
  /** The partner the key belongs to, whatever its mode. */
  readonly partnerId: string;
  readonly mode: KeyMode;
  /** The catalog the key reads: the partner's own for a live key, its sandbox for a test key. */
  readonly catalogId: string;
}

/** The principal of a stored key. */
export function principalOf(keyId: string, partnerId: string, mode: KeyMode): Principal {
  return { keyId, partnerId, mode, catalogId: mode === 'live' ? partnerId : sandboxCatalogOf(partnerId) };
}
