import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AdminError } from './admin-errors.js';

/** The shortest password an admin may choose. */
export const MIN_PASSWORD_LENGTH = 12;
/** A longer new password is refused; a longer one at sign-in is tried as its first this many characters, and fails. */
export const MAX_PASSWORD_LENGTH = 1_024;

/**
 * How many password hashes run at once in a process, and how many more may wait their turn and
 * for how long. Two hashes take two of libuv's four threads and 64 MiB, so the API in the same
 * process keeps its share of a two-core machine. A caller told to come back after 2 seconds is
 * better served than one left waiting longer.
 */
export const PASSWORD_HASH_LIMITS = { concurrent: 2, maxWaiting: 32, maxWaitMs: 2_000 } as const;

/**
 * scrypt at N = 2^15, r = 8, p = 3: one of the cost settings OWASP lists as equal to its minimum
 * (N = 2^17, p = 1), with 32 MiB a hash instead of 128, for a small shared machine (about 250 ms
 * on one core). The parameters are written into each stored hash, so they can be raised later.
 */
const COST = { N: 2 ** 15, r: 8, p: 3 } as const;
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const SCHEME = 'scrypt';

function derive(password: string, salt: Buffer, cost: { N: number; r: number; p: number }, length: number): Promise<Buffer> {
  // Node refuses more than 32 MiB by default; allow the cost above with room to spare.
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) => (error === null ? resolve(key) : reject(error)));
  });
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url: a fresh salt each time. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, COST, HASH_BYTES);
  return [SCHEME, COST.N, COST.r, COST.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Whether the password matches the stored hash, compared in constant time; a malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltText, hashText] = stored.split('$');
  if (scheme !== SCHEME || saltText === undefined || hashText === undefined) return false;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (![cost.N, cost.r, cost.p].every((value) => Number.isSafeInteger(value) && value > 0)) return false;
  const expected = Buffer.from(hashText, 'base64url');
  if (expected.length === 0) return false;
  const actual = await derive(password, Buffer.from(saltText, 'base64url'), cost, expected.length);
  return timingSafeEqual(actual, expected);
}

let dummy: Promise<string> | undefined;

/**
 * A hash of no one's password, to verify against when the email is unknown: a sign-in takes as
 * long whether or not the account exists.
 */
export function dummyPasswordHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(SALT_BYTES).toString('base64url'));
  return dummy;
}

/**
 * Whether `password` signs in to an account with hash `stored` (null: no account has the email).
 * Every call costs one hash, whatever the password's length or the account: an unknown email and
 * a password too long are tried against the dummy hash, and never match.
 */
export async function checkSignInPassword(password: string, stored: string | null): Promise<boolean> {
  const fits = password.length <= MAX_PASSWORD_LENGTH;
  const against = fits && stored !== null ? stored : await dummyPasswordHash();
  const matches = await verifyPassword(password.slice(0, MAX_PASSWORD_LENGTH), against);
  return matches && fits && stored !== null;
}

/** The rules a chosen password must meet; the confirmation must repeat it exactly. */
export function checkNewPassword(password: string, confirmation: string): void {
  // Counted in code points: a password of twelve accented or emoji characters is twelve long.
  if (Array.from(password).length < MIN_PASSWORD_LENGTH) {
    throw new AdminError('password_too_short', `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) throw new AdminError('password_too_long', `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`);
  if (password !== confirmation) throw new AdminError('passwords_differ', 'The two passwords are not the same.');
}
