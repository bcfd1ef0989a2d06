import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A well-formed key (`pcat_live_` and 40 base62 characters) that was never issued, random each time. */
export const madeUpKey = (): string => `pcat_live_${Array.from(randomBytes(40), (b) => ALPHABET[b % ALPHABET.length]).join('')}`;
