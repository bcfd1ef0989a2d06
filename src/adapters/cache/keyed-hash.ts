import { randomBytes } from 'node:crypto';

/**
 * HalfSipHash-1-3 (SipHash's 32-bit variant, the one Linux keys its hash tables with), over a text's
 * character codes taken one byte each. Keyed with a secret drawn when a table is made, so a caller who
 * chooses the keys cannot choose where they land: with an unkeyed hash (FNV-1a until November 2026)
 * a partner could make SKUs that all fell into one slot of the response cache's key table, and every
 * lookup then walked them all.
 *
 * A text is hashed in two parts, a prefix whose state is worked out once (`hashState`) and the rest
 * (`hashFrom`), as if the two were joined: the response cache's keys share a partner's prefix.
 */

/** The hash's state after some text: its four words, the bytes of a word not yet full, and the length so far. */
export interface HashState {
  readonly v0: number;
  readonly v1: number;
  readonly v2: number;
  readonly v3: number;
  readonly word: number;
  readonly length: number;
}

/** A new secret key's starting state, from 8 random bytes. */
export function newHashKey(): HashState {
  const key = randomBytes(8);
  return startingState(key.readInt32LE(0), key.readInt32LE(4));
}

/** The starting state for the key (k0, k1), as HalfSipHash sets it. */
export function startingState(k0: number, k1: number): HashState {
  return { v0: k0 | 0, v1: k1 | 0, v2: (0x6c796765 ^ k0) | 0, v3: (0x74656462 ^ k1) | 0, word: 0, length: 0 };
}

/** The state after `text`, from `state`. */
export function hashState(state: HashState, text: string): HashState {
  absorb(state, text, false);
  return { v0: s0, v1: s1, v2: s2, v3: s3, word: sWord, length: sLength };
}

/** The 32-bit hash (as a signed integer) of the text `state` was made from followed by `text`. */
export function hashFrom(state: HashState, text: string): number {
  return absorb(state, text, true);
}

/** Where `absorb` leaves the state when not finishing: read back at once by `hashState`. */
let s0 = 0;
let s1 = 0;
let s2 = 0;
let s3 = 0;
let sWord = 0;
let sLength = 0;

/**
 * Takes in the text's bytes from the state: one round for each full word; when finishing, the last
 * word (the length's low byte on top of the bytes left) with one round more, then three. One function
 * for both, so the rounds are written in one place; on the hot path (finishing) it allocates nothing.
 */
function absorb(state: HashState, text: string, finish: boolean): number {
  let { v0, v1, v2, v3, word, length } = state;
  const end = text.length;
  for (let i = 0; i <= end; i += 1) {
    let m: number;
    if (i < end) {
      word |= (text.charCodeAt(i) & 0xff) << ((length & 3) << 3);
      length += 1;
      if ((length & 3) !== 0) continue;
      m = word;
      word = 0;
    } else if (finish) {
      m = word | (length << 24);
    } else {
      break;
    }
    v3 ^= m;
    v0 = (v0 + v1) | 0; v1 = ((v1 << 5) | (v1 >>> 27)) ^ v0; v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0; v3 = ((v3 << 8) | (v3 >>> 24)) ^ v2;
    v0 = (v0 + v3) | 0; v3 = ((v3 << 7) | (v3 >>> 25)) ^ v0;
    v2 = (v2 + v1) | 0; v1 = ((v1 << 13) | (v1 >>> 19)) ^ v2; v2 = (v2 << 16) | (v2 >>> 16);
    v0 ^= m;
  }
  if (!finish) {
    s0 = v0; s1 = v1; s2 = v2; s3 = v3; sWord = word; sLength = length;
    return 0;
  }
  v2 ^= 0xff;
  for (let round = 0; round < 3; round += 1) {
    v0 = (v0 + v1) | 0; v1 = ((v1 << 5) | (v1 >>> 27)) ^ v0; v0 = (v0 << 16) | (v0 >>> 16);
    v2 = (v2 + v3) | 0; v3 = ((v3 << 8) | (v3 >>> 24)) ^ v2;
    v0 = (v0 + v3) | 0; v3 = ((v3 << 7) | (v3 >>> 25)) ^ v0;
    v2 = (v2 + v1) | 0; v1 = ((v1 << 13) | (v1 >>> 19)) ^ v2; v2 = (v2 << 16) | (v2 >>> 16);
  }
  return v1 ^ v3;
}
