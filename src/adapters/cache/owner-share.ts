import { grown } from './grown.js';

/**
 * The most of either bound (entries, bytes) one owner may hold before room is made from its own
 * entries first: past it, it is the ring's heavy owner. Half, so that a single owner still uses the
 * whole ring (its own oldest going first is the order of storing), and an owner that floods the
 * ring with entries nobody asks for again takes at most the half the others do not use.
 */
export const OWNER_SHARE = 0.5;
/** No owner: none is heavy. */
export const NO_OWNER = -1;
/** No entry: the end of an order of storing, or none left to let go. */
export const NO_ENTRY = -1;

/**
 * Who leaves the response cache first, and whose entries a page the ring comes round to keeps
 * (AnswerRing holds the entries; this class only decides). Whichever bound is reached (the bytes the
 * entries are counted for, their number, or the room left in the ring's pages):
 * - while one owner (a partner) holds more than OWNER_SHARE of either bound, it is the heavy owner,
 *   and its own oldest entry goes first (`nextToGo`);
 * - otherwise the oldest stored goes first;
 * - when the ring comes round to a page while an owner is heavy, the other owners' entries in it
 *   are kept (`spares`; the ring lets those past their TTL go all the same), and only the heavy
 *   owner's go.
 * So one partner's flood of distinct misses lets its own entries go and holds the others'; with one
 * owner, or while none holds more than its share, entries leave in the order they were stored.
 * Which owner makes room is decided once for a whole store (`heavyFor`).
 *
 * It keeps, for each entry (by the ring's entry numbers), its owner and its neighbours in two orders
 * of storing, both doubly linked through the entries' numbers: every entry's, oldest first, and its
 * owner's; and for each owner its oldest and newest entry, how many it holds and what they are
 * counted for, all in typed arrays.
 */
export class OwnerShare {
  private ownerOf = new Int32Array(0);
  private older = new Int32Array(0);
  private newer = new Int32Array(0);
  private ownerOlder = new Int32Array(0);
  private ownerNewer = new Int32Array(0);
  private oldest = NO_ENTRY;
  private newest = NO_ENTRY;
  /** By owner: its oldest and newest entry, how many it holds and what they are counted for. */
  private ownerOldest = new Int32Array(0);
  private ownerNewest = new Int32Array(0);
  private ownerEntries = new Int32Array(0);
  private ownerBytes = new Float64Array(0);
  /** The owner holding more than OWNER_SHARE of a bound, when one does. */
  private heavyOwner = NO_OWNER;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  /** What the owner's entries held now are counted for, and how many they are. */
  heldBy(owner: number): { entries: number; bytes: number } {
    return owner < this.ownerEntries.length ? { entries: this.ownerEntries[owner]!, bytes: this.ownerBytes[owner]! } : { entries: 0, bytes: 0 };
  }

  /**
   * The owner that makes room for a store by `owner` of an entry counted for `size`: the heavy owner,
   * or the one storing if this entry makes it heavy, else NO_OWNER. Decided once for the whole store:
   * else a heavy owner at the share's edge, its oldest gone first, would stop being heavy halfway
   * through and the others' entries would go for it.
   */
  heavyFor(owner: number, size: number): number {
    if (this.heavyOwner !== NO_OWNER) return this.heavyOwner;
    return this.heavyWith(owner, size) ? owner : NO_OWNER;
  }

  /** The entry to let go first to make room: the heavy owner's oldest while it holds any, else the oldest of all; NO_ENTRY when none is held. */
  nextToGo(heavy: number): number {
    const own = heavy === NO_OWNER ? NO_ENTRY : this.ownerOldest[heavy]!;
    return own === NO_ENTRY ? this.oldest : own;
  }

  /** Whether a page the ring comes round to keeps the entry, while `heavy` makes room: another owner's is kept. */
  spares(number: number, heavy: number): boolean {
    return heavy !== NO_OWNER && this.ownerOf[number] !== heavy;
  }

  /** Room for entries numbered below `length`. */
  growEntries(length: number): void {
    this.ownerOf = grown(this.ownerOf, new Int32Array(length));
    this.older = grown(this.older, new Int32Array(length));
    this.newer = grown(this.newer, new Int32Array(length));
    this.ownerOlder = grown(this.ownerOlder, new Int32Array(length));
    this.ownerNewer = grown(this.ownerNewer, new Int32Array(length));
  }

  /** Counts the entry as its owner's, counted for `size`, the newest of all and of the owner's. */
  add(number: number, owner: number, size: number): void {
    if (owner >= this.ownerEntries.length) this.growOwners(owner);
    this.ownerOf[number] = owner;
    this.ownerEntries[owner] = this.ownerEntries[owner]! + 1;
    this.ownerBytes[owner] = this.ownerBytes[owner]! + size;
    if (this.heavyOwner === NO_OWNER && this.heavy(owner)) this.heavyOwner = owner;
    this.older[number] = this.newest;
    this.newer[number] = NO_ENTRY;
    if (this.newest === NO_ENTRY) this.oldest = number;
    else this.newer[this.newest] = number;
    this.newest = number;
    const ownNewest = this.ownerNewest[owner]!;
    this.ownerOlder[number] = ownNewest;
    this.ownerNewer[number] = NO_ENTRY;
    if (ownNewest === NO_ENTRY) this.ownerOldest[owner] = number;
    else this.ownerNewer[ownNewest] = number;
    this.ownerNewest[owner] = number;
  }

  /** Takes the entry, counted for `size`, out of both orders and out of its owner's count. */
  remove(number: number, size: number): void {
    const owner = this.ownerOf[number]!;
    this.ownerEntries[owner] = this.ownerEntries[owner]! - 1;
    this.ownerBytes[owner] = this.ownerBytes[owner]! - size;
    // Another owner may hold more than its share of the other bound: it is seen as heavy when it next stores.
    if (owner === this.heavyOwner && !this.heavy(owner)) this.heavyOwner = NO_OWNER;
    const older = this.older[number]!;
    const newer = this.newer[number]!;
    if (older === NO_ENTRY) this.oldest = newer;
    else this.newer[older] = newer;
    if (newer === NO_ENTRY) this.newest = older;
    else this.older[newer] = older;
    const ownOlder = this.ownerOlder[number]!;
    const ownNewer = this.ownerNewer[number]!;
    if (ownOlder === NO_ENTRY) this.ownerOldest[owner] = ownNewer;
    else this.ownerNewer[ownOlder] = ownNewer;
    if (ownNewer === NO_ENTRY) this.ownerNewest[owner] = ownOlder;
    else this.ownerOlder[ownNewer] = ownOlder;
  }

  /** Whether the owner holds more than OWNER_SHARE of either bound. */
  private heavy(owner: number): boolean {
    return this.ownerEntries[owner]! > OWNER_SHARE * this.maxEntries || this.ownerBytes[owner]! > OWNER_SHARE * this.maxBytes;
  }

  /** Whether the owner would hold more than OWNER_SHARE of either bound with one entry more, counted for `size`. */
  private heavyWith(owner: number, size: number): boolean {
    if (owner >= this.ownerEntries.length) return false;
    return this.ownerEntries[owner]! + 1 > OWNER_SHARE * this.maxEntries || this.ownerBytes[owner]! + size > OWNER_SHARE * this.maxBytes;
  }

  /** The owners' tables grown to hold `owner`. */
  private growOwners(owner: number): void {
    const length = Math.max(16, 2 ** Math.ceil(Math.log2(owner + 1)));
    this.ownerOldest = grown(this.ownerOldest, new Int32Array(length).fill(NO_ENTRY));
    this.ownerNewest = grown(this.ownerNewest, new Int32Array(length).fill(NO_ENTRY));
    this.ownerEntries = grown(this.ownerEntries, new Int32Array(length));
    this.ownerBytes = grown(this.ownerBytes, new Float64Array(length));
  }
}
