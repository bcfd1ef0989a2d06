import { seededRandom } from './seeded-random.js';

/**
 * The attacker's tool against the response cache's key table as it was until November 2026: an
 * unkeyed FNV-1a over the key (the partner id, the kind, the SKU), the slot its hash shifted right by
 * one, masked. The partner id and the kind are known to the partner, so SKUs that all land in one
 * slot can be made: this builds them, to replay the flood against the keyed table.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** The characters a SKU may hold. */
const SKU_CHARACTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-';

function fnvFrom(state: number, text: string): number {
  let hash = state;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  return hash;
}

/** The slot the old table put a key in, in a table of 2^tableBits slots. */
export function fnvSlot(key: string, tableBits: number): number {
  return (fnvFrom(FNV_OFFSET, key) >>> 1) & ((1 << tableBits) - 1);
}

/** FNV's prime's inverse modulo 2^32 (Newton's iteration: each step doubles the bits that are right). */
function inverseOfPrime(): number {
  let inverse = FNV_PRIME;
  for (let i = 0; i < 5; i += 1) inverse = Math.imul(inverse, 2 - Math.imul(FNV_PRIME, inverse));
  return inverse;
}

/**
 * `count` distinct SKUs whose keys (`prefix` + SKU) the old table put in one slot of any table of up
 * to 2^tableBits slots. Each is 9 characters: 6 random, then 2 tried over every SKU character and a
 * last one solved for: after the last character the hash's low bits are (state ^ c) times the prime,
 * so they match the target exactly when the state before it matches the target's inverse image in
 * every bit but the low 8, and the last character is what is left.
 */
export function fnvCollidingSkus(prefix: string, count: number, tableBits: number, seed = 1): string[] {
  const random = seededRandom(seed);
  const bits = tableBits + 1;
  const mask = bits >= 32 ? -1 : (1 << bits) - 1;
  const target = 0x5a5a5a5a & mask;
  const wanted = Math.imul(target, inverseOfPrime()) & mask;
  const prefixState = fnvFrom(FNV_OFFSET, prefix);
  const found = new Set<string>();
  while (found.size < count) {
    let base = '';
    for (let i = 0; i < 6; i += 1) base += SKU_CHARACTERS.charAt(Math.floor(random() * SKU_CHARACTERS.length));
    const baseState = fnvFrom(prefixState, base);
    for (const first of SKU_CHARACTERS) {
      const afterFirst = Math.imul(baseState ^ first.charCodeAt(0), FNV_PRIME);
      for (const second of SKU_CHARACTERS) {
        const state = Math.imul(afterFirst ^ second.charCodeAt(0), FNV_PRIME);
        const rest = (state ^ wanted) & mask;
        if ((rest & ~0xff) !== 0) continue;
        const last = String.fromCharCode(rest);
        if (!SKU_CHARACTERS.includes(last)) continue;
        found.add(base + first + second + last);
        if (found.size === count) break;
      }
      if (found.size === count) break;
    }
  }
  return [...found];
}

/** `count` distinct SKUs of the same length, at random. */
export function randomSkus(count: number, seed = 2): string[] {
  const random = seededRandom(seed);
  const found = new Set<string>();
  while (found.size < count) {
    let sku = '';
    for (let i = 0; i < 9; i += 1) sku += SKU_CHARACTERS.charAt(Math.floor(random() * SKU_CHARACTERS.length));
    found.add(sku);
  }
  return [...found];
}
