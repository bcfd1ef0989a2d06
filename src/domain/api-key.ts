import { hash, randomInt } from 'node:crypto';

export const API_KEY_PREFIX = 'pcat_live_';
const API_KEY_PATTERN = /^pcat_live_[A-Za-z0-9]{32,64}$/;
const ISSUED_KEY_RANDOM_LENGTH = 40;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Whether a presented key has the issued shape; a key of another shape is never looked up. */
export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** The only form in which a key is ever stored: lowercase hex SHA-256 of the whole key. */
export function hashApiKey(key: string): string {
  // The one-shot hash: half the CPU of createHash().update().digest(), and it runs on every request.
  return hash('sha256', key, 'hex');
}

/** A fresh key: the live prefix and 40 uniformly random base62 characters (over 230 bits). */
export function generateApiKey(): string {
  let random = '';
  for (let i = 0; i < ISSUED_KEY_RANDOM_LENGTH; i += 1) random += BASE62.charAt(randomInt(BASE62.length));
  return API_KEY_PREFIX + random;
}

/** Who a request acts for, once its key is known. */
export interface Principal {
  readonly keyId: string;
  readonly partnerId: string;
}
