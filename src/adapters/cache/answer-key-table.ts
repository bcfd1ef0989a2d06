import { grown } from './grown.js';

/** The fewest slots of the key table; it doubles whenever its entries would fill half of it. */
const SMALLEST_TABLE = 1024;
/** A slot of the key table that holds no entry. */
const EMPTY = 0;
/**
 * The farthest an entry's slot may lie past the slot its hash names. Half full at most, with a keyed
 * hash, the table put 400,000 random keys at most 22 slots on in five runs (23 probes), 40,000 at most 14,
 * so this is never reached unless the hash is aimed at: an entry that would lie farther is not held
 * (and one the table's doubling would put farther is let go), and a key is never looked for farther.
 */
export const MAX_DISPLACEMENT = 64;
/** What `find` answers for a key not held. */
export const NOT_HELD = -1;

/** What the key table asks of the store that holds the keys' bytes. */
export interface HeldKeys {
  /** Whether the entry's key is the prefix followed by the key: how entries of one hash are told apart. */
  keyIs(number: number, prefix: string, key: string): boolean;
}

/** What finding a key costs, in slots looked at (`AnswerKeyTable.figures`). */
export interface KeyTableFigures {
  readonly slots: number;
  readonly meanProbes: number;
  readonly mostProbes: number;
  readonly meanMissProbes: number;
}

/**
 * The response cache's key table (AnswerRing's): open addressing with linear probing on the key's
 * keyed hash, each slot an entry's number plus one (EMPTY for none), at most half full, entries
 * taken out by moving back those after them (no tombstones). A key is found by its hash and then
 * compared with the key in the entry's record, which the store holds (`HeldKeys`): the table keeps
 * no string, only slots and each entry's hash, in typed arrays.
 *
 * The hash is keyed with a secret drawn when the ring is made (keyed-hash.ts), so whoever chooses
 * the keys cannot make them land together, and no entry lies more than MAX_DISPLACEMENT slots past
 * its hash's: what an entry costs to find does not depend on what else is held.
 */
export class AnswerKeyTable {
  private slots = new Int32Array(SMALLEST_TABLE);
  /** Each entry's hash, by its number. */
  private hashes = new Int32Array(0);
  private held = 0;

  constructor(private readonly keys: HeldKeys) {}

  /** Entries in the table. */
  get size(): number {
    return this.held;
  }

  /** Room for the hashes of entries numbered below `length`. */
  growEntries(length: number): void {
    this.hashes = grown(this.hashes, new Int32Array(length));
  }

  /** The number of the entry held under the prefix followed by the key, or NOT_HELD. */
  find(prefix: string, key: string, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask, looked = 0; looked <= MAX_DISPLACEMENT; slot = (slot + 1) & mask, looked += 1) {
      const held = this.slots[slot]!;
      if (held === EMPTY) return NOT_HELD;
      const number = held - 1;
      if (this.hashes[number] === hash && this.keys.keyIs(number, prefix, key)) return number;
    }
    return NOT_HELD;
  }

  /** Whether one more entry would fill half the table: `grow` before listing it. */
  fullWithOneMore(): boolean {
    return 2 * (this.held + 1) > this.slots.length;
  }

  /** Whether a new entry of this hash finds an empty slot at most MAX_DISPLACEMENT past the hash's. */
  hasFreeSlot(hash: number): boolean {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask, looked = 0; looked <= MAX_DISPLACEMENT; slot = (slot + 1) & mask, looked += 1) {
      if (this.slots[slot] === EMPTY) return true;
    }
    return false;
  }

  /** Puts the entry in the table, in the first empty slot from its hash's (one `hasFreeSlot` found, or nearer). */
  list(number: number, hash: number): void {
    this.hashes[number] = hash;
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
    this.slots[slot] = number + 1;
    this.held += 1;
  }

  /**
   * Doubles the table, and answers the entries it took out: those that would lie past MAX_DISPLACEMENT
   * in it (none, unless the hash is aimed at), for the store to let go.
   */
  grow(): number[] {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    const mask = this.slots.length - 1;
    const farOut: number[] = [];
    for (const held of old) {
      if (held === EMPTY) continue;
      const home = this.hashes[held - 1]! & mask;
      let slot = home;
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      if (((slot - home) & mask) > MAX_DISPLACEMENT) farOut.push(held - 1);
      else this.slots[slot] = held;
    }
    this.held -= farOut.length;
    return farOut;
  }

  /** Takes the entry out of the table, moving back the entries after it that its slot had pushed on. */
  unlist(number: number): void {
    const { slots } = this;
    const mask = slots.length - 1;
    let gap = this.hashes[number]! & mask;
    while (slots[gap] !== number + 1) gap = (gap + 1) & mask;
    for (let slot = (gap + 1) & mask; slots[slot] !== EMPTY; slot = (slot + 1) & mask) {
      const home = this.hashes[slots[slot]! - 1]! & mask;
      // The entry may move into the gap unless its home lies after the gap, up to where it is now (cyclically).
      const stays = gap <= slot ? gap < home && home <= slot : gap < home || home <= slot;
      if (stays) continue;
      slots[gap] = slots[slot]!;
      gap = slot;
    }
    slots[gap] = EMPTY;
    this.held -= 1;
  }

  /**
   * What finding a key costs now, in slots looked at: on average over the entries held (a hit), at
   * most for any of them, and on average for a key not held whose hash may name any slot (a miss: up
   * to the first empty slot, or MAX_DISPLACEMENT + 1). Worked out by going over the whole table: for
   * tests and benches, not for the request path.
   */
  figures(): KeyTableFigures {
    const { slots } = this;
    const mask = slots.length - 1;
    let total = 0;
    let most = 0;
    slots.forEach((held, slot) => {
      if (held === EMPTY) return;
      const probes = ((slot - this.hashes[held - 1]!) & mask) + 1;
      total += probes;
      most = Math.max(most, probes);
    });
    // Going back from an empty slot (one is always there: the table is at most half full), each slot's run of full slots after it.
    const empty = slots.indexOf(EMPTY);
    let missTotal = 0;
    for (let step = 1, run = 0; step <= slots.length; step += 1) {
      const slot = (empty - step) & mask;
      run = slots[slot] === EMPTY ? 0 : run + 1;
      missTotal += Math.min(run, MAX_DISPLACEMENT + 1) + 1;
    }
    return { slots: slots.length, meanProbes: this.held === 0 ? 0 : total / this.held, mostProbes: most, meanMissProbes: missTotal / slots.length };
  }
}
