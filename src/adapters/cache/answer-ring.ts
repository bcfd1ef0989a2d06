import { Buffer } from 'node:buffer';
import { AnswerKeyTable, NOT_HELD, type HeldKeys, type KeyTableFigures } from './answer-key-table.js';
import { grown } from './grown.js';
import { KeptCopies, type Answer } from './kept-copies.js';
import { hashFrom, hashState, newHashKey, type HashState } from './keyed-hash.js';
import { NO_ENTRY, NO_OWNER, OwnerShare } from './owner-share.js';
import { reservedPages } from './reserved-pages.js';

export { MAX_DISPLACEMENT } from './answer-key-table.js';
export { OWNER_SHARE } from './owner-share.js';

/** What the ring holds under a key: an answer's body and ETag, or a remembered "no such product". */
export type RingEntry = Answer | typeof NO_SUCH_ANSWER;

/**
 * The first part of many keys, worked out once by a ring (`AnswerRing.prefix`): its text, the state
 * of the ring's keyed hash after it, and whose keys these are. A key given with a prefix is the
 * prefix's text followed by the key's; found, held and compared without joining the two (a joined
 * key is a string V8 copies out flat on the first read of its characters: half of a hit's time).
 */
export interface KeyPrefix {
  readonly text: string;
  readonly hash: HashState;
  /** The owner of the entries stored under the prefix (a partner): what its share of the ring is counted by. */
  readonly owner: number;
}

/** A remembered miss: held so a caller probing unknown values costs one read per value. */
export const NO_SUCH_ANSWER = Symbol('no such answer');

export interface AnswerRingOptions {
  /** Most bytes the entries may be counted for (`sizeOf`); the ring's pages take at most this much, rounded up to a page. */
  readonly maxBytes: number;
  /** Most entries held at once, remembered misses included. */
  readonly maxEntries: number;
  /** How long an entry may be served after it was stored; 0 or less: no limit. */
  readonly ttlMs: number;
  /** What an entry is counted for against `maxBytes`: its body's length, or -1 for a remembered miss. */
  readonly sizeOf: (bodyBytes: number) => number;
  /** Milliseconds on a clock that only goes forward (performance.now by default). */
  readonly now?: () => number;
}

/** A record's header in its page: the entry's number and the record's length, 4 bytes each. After it, the key, the ETag, then the body. */
const HEADER_BYTES = 8;
/** The longest key the ring holds, in characters (one byte each): a key longer, or with a character past U+00FF, is not held. */
export const MAX_KEY_LENGTH = 512;
const LARGEST_PAGE = 1024 * 1024;
const SMALLEST_PAGE = 4 * 1024;
/** A body larger than this share of a page is kept in a buffer of its own, its record holding the rest. */
const LARGE_SHARE = 4;
/**
 * The ring takes a page more only when the records of the entries it holds would fill this share of
 * the pages it has: otherwise it goes round, and the space of entries gone since is used again. A
 * ring that took a page whenever it came round would end up with pages for the whole byte bound
 * beside what the entries are counted for, and take more than the bound.
 */
const FULL_SHARE = 0.9;
/** The page and offset of an entry number no entry holds now. */
const NOWHERE = -1;
const MISS = -1;

/**
 * The response cache's store: every entry's bytes (its key, ETag and body) live in a ring of large
 * buffers, written one after the other, and everything else it knows of an entry in typed arrays,
 * its key table included, so that holding hundreds of thousands of answers puts no object per answer
 * on the collector's heap. A buffer per answer made the collector trace each one, and its memory, taken
 * and given back outside the heap as answers came and went, set off a full collection for every 66 MB
 * or so (bench/cache-gc.ts); a Map of the keys' strings was still two or three objects an answer
 * for every full collection to walk. The byte bound's pages are allocated once, when the ring is
 * made (reserved-pages.ts: address space, given memory as it is written), each first written when
 * the ring needs it, then written over in turn; the ring writes no more pages than its entries'
 * records fill (FULL_SHARE), up to the byte bound's worth.
 *
 * The key table (answer-key-table.ts) finds an entry by its key's keyed hash and compares the key
 * with the one in the entry's record (`keyIs`), so no entry lies far from its hash's slot whatever
 * keys are chosen.
 *
 * What leaves first, whichever bound is reached, is the share rule's (owner-share.ts): the oldest
 * stored, unless one owner (a partner) holds more than its share, whose own oldest then goes, the
 * others' entries kept when the ring comes round to their page (moved to the page's start). An entry
 * stored again under its key, or found past its TTL, leaves at once; the space its record took is
 * taken back when the ring comes round to it.
 *
 * A body handed out is a copy: a page is written over while a copy may still wait on a socket. A
 * body too large for the ring's pages (over a quarter of one) is kept in a buffer of its own (a copy,
 * when it came as a view into a larger buffer) and handed out as it is, since nothing ever writes into it.
 * The copy made when an entry is first asked for is kept (kept-copies.ts) and handed out again until
 * the entry goes, counted in the byte bound.
 */
export class AnswerRing implements HeldKeys {
  private readonly maxBytes: number;
  private readonly maxEntries: number;
  private readonly ttlMs: number;
  private readonly sizeOf: (bodyBytes: number) => number;
  private readonly now: () => number;
  /** The key table's hash key: this ring's own, drawn when it is made. */
  private readonly hashKey: HashState;
  /** The prefix of no text: a key alone, of owner 0. */
  private readonly noPrefix: KeyPrefix;
  /** The bytes of one page. */
  readonly pageBytes: number;
  /** The most pages the ring may take: the byte bound's worth. */
  private readonly maxPages: number;
  /** How many pages the ring goes round now; each is reserved when the ring is made (`reservedPages`), or allocated when the ring first reaches it. */
  private ringPages = 2;
  /** What the records of the entries held take in the pages. */
  private liveRecordBytes = 0;
  private readonly pages: Buffer[] = [];
  /** Pages allocated when the ring was made and not reached yet, taken in turn (`pop`) as it first reaches each. */
  private readonly reserved: Buffer[];
  /** How far each page is written, and what the records of entries still held take in it. */
  private readonly filled: number[] = [0];
  private readonly pageLive: number[] = [0];
  /** The page being written, and the page the ring comes round to next (`recycle`). */
  private head = 0;
  private tail = 0;

  /** Finds an entry's number by its key, comparing keys with `keyIs`. */
  private readonly keys = new AnswerKeyTable(this);
  /** Who leaves first: the entries' orders of storing and the owners' counts. */
  private readonly share: OwnerShare;
  private large: (Buffer | undefined)[] = [];
  /** The copy kept of each entry's answer, once asked for. */
  private readonly copies: KeptCopies;
  private page = new Int32Array(0);
  private offset = new Int32Array(0);
  private keyBytes = new Int32Array(0);
  private etagBytes = new Int32Array(0);
  private bodyBytes = new Int32Array(0);
  private storedAt = new Float64Array(0);
  private readonly freeNumbers: number[] = [];
  private nextNumber = 0;
  private heldBytes = 0;

  constructor(options: AnswerRingOptions) {
    this.maxBytes = options.maxBytes;
    this.maxEntries = options.maxEntries;
    this.ttlMs = options.ttlMs;
    this.sizeOf = options.sizeOf;
    this.now = options.now ?? (() => performance.now());
    this.hashKey = newHashKey();
    this.noPrefix = this.prefix('');
    // Some 64 pages, none under 4 KB nor over 1 MB: a page's unused end is lost until the ring comes round.
    this.pageBytes = Math.min(LARGEST_PAGE, Math.max(SMALLEST_PAGE, 2 ** Math.ceil(Math.log2(this.maxBytes / 64))));
    this.maxPages = Math.max(2, Math.ceil(this.maxBytes / this.pageBytes));
    this.copies = new KeptCopies(this.maxBytes);
    this.share = new OwnerShare(this.maxEntries, this.maxBytes);
    this.reserved = reservedPages(this.maxPages, this.pageBytes);
  }

  /** The prefix of keys that start with `text`, stored for `owner` (a small whole number: 0 when there is one owner). */
  prefix(text: string, owner = 0): KeyPrefix {
    return { text, hash: hashState(this.hashKey, text), owner };
  }

  /** Entries held now, those past their TTL not yet gone included. */
  get entries(): number {
    return this.keys.size;
  }

  /** What the entries held now are counted for (`sizeOf`), with the copies kept of them, as `maxBytes` bounds it. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** The bytes the ring's pages take now. */
  get pageBytesInUse(): number {
    return this.pages.length * this.pageBytes;
  }

  /** The bytes of the pages reserved and not reached yet: address space the system gives memory to only as they are written. */
  get pageBytesReserved(): number {
    return this.reserved.length * this.pageBytes;
  }

  /** What the owner's entries held now are counted for, and how many they are. */
  heldBy(owner: number): { entries: number; bytes: number } {
    return this.share.heldBy(owner);
  }

  /** What finding a key costs now in the key table (AnswerKeyTable.figures): for tests and benches, not for the request path. */
  keyTableFigures(): KeyTableFigures {
    return this.keys.figures();
  }

  /** What is held under the key, or undefined: never stored, gone, or past its TTL (and gone now). */
  get(key: string, prefix: KeyPrefix = this.noPrefix): RingEntry | undefined {
    const number = this.keys.find(prefix.text, key, hashFrom(prefix.hash, key));
    if (number === NOT_HELD) return undefined;
    if (this.ttlMs > 0 && this.now() - this.storedAt[number]! > this.ttlMs) {
      this.remove(number);
      return undefined;
    }
    const body = this.bodyBytes[number]!;
    if (body === MISS) return NO_SUCH_ANSWER;
    const kept = this.copies.of(number);
    if (kept !== undefined) return kept;
    const page = this.pages[this.page[number]!]!;
    const etagStart = this.offset[number]! + HEADER_BYTES + this.keyBytes[number]!;
    const etagEnd = etagStart + this.etagBytes[number]!;
    const etag = page.toString('latin1', etagStart, etagEnd);
    const large = this.large[number];
    if (large !== undefined) return { body: large, etag };
    // A buffer of its own: a small one from node's shared pool, once kept, would hold its whole pool chunk.
    const copy = Buffer.allocUnsafeSlow(body);
    page.copy(copy, 0, etagEnd, etagEnd + body);
    const answer = { body: copy, etag };
    this.keepCopy(number, answer);
    return answer;
  }

  /** Keeps the copy of an entry's answer, if the copies' share of the bound and the bound itself have room for it. */
  private keepCopy(number: number, answer: Answer): void {
    const bytes = answer.body.length;
    if (this.heldBytes + bytes <= this.maxBytes && this.copies.keep(number, answer)) this.heldBytes += bytes;
  }

  /**
   * Holds the answer (or a remembered miss, for null) under the key, in place of whatever was held
   * there; an answer counted for more than `maxBytes`, with an ETag that is not plain ASCII, under a
   * key longer than MAX_KEY_LENGTH or with a character past U+00FF, or whose slot would lie past
   * MAX_DISPLACEMENT, is not held (and what was held under the key is gone).
   */
  set(key: string, answer: { readonly body: Buffer; readonly etag: string } | null, prefix: KeyPrefix = this.noPrefix): void {
    const hash = hashFrom(prefix.hash, key);
    const held = this.keys.find(prefix.text, key, hash);
    if (held !== NOT_HELD) {
      // Many requests that missed together store the same answer: written again, each would leave a
      // record gone behind it, and the ring would come round to its pages and let live entries go.
      if (this.holdsSame(held, answer)) return;
      this.remove(held);
    }
    const keyLength = prefix.text.length + key.length;
    if (keyLength > MAX_KEY_LENGTH || !isByteString(prefix.text) || !isByteString(key)) return;
    const bodyBytes = answer === null ? MISS : answer.body.length;
    const size = this.sizeOf(bodyBytes);
    if (size > this.maxBytes) return;
    const etag = answer === null ? '' : answer.etag;
    if (!PLAIN_ETAG.test(etag)) return;
    const large = answer !== null && bodyBytes > this.pageBytes / LARGE_SHARE;
    const recordBytes = HEADER_BYTES + keyLength + etag.length + (answer === null || large ? 0 : bodyBytes);
    const heavy = this.share.heavyFor(prefix.owner, size);
    while ((this.keys.size >= this.maxEntries || this.heldBytes + size > this.maxBytes) && this.evictOne(heavy));
    if (!this.hasFreeSlot(hash)) return;
    const number = this.freeNumbers.pop() ?? this.newNumber();
    const at = this.append(recordBytes, heavy);
    const page = this.pages[this.head]!;
    page.writeUInt32LE(number, at);
    page.writeUInt32LE(recordBytes, at + 4);
    page.write(prefix.text, at + HEADER_BYTES, 'latin1');
    page.write(key, at + HEADER_BYTES + prefix.text.length, 'latin1');
    page.write(etag, at + HEADER_BYTES + keyLength, 'latin1');
    if (answer !== null && !large) answer.body.copy(page, at + HEADER_BYTES + keyLength + etag.length);
    this.large[number] = large ? ownBytes(answer.body) : undefined;
    this.copies.noneFor(number);
    this.keyBytes[number] = keyLength;
    this.page[number] = this.head;
    this.offset[number] = at;
    this.etagBytes[number] = etag.length;
    this.bodyBytes[number] = bodyBytes;
    this.storedAt[number] = this.now();
    this.heldBytes += size;
    this.liveRecordBytes += recordBytes;
    this.share.add(number, prefix.owner, size);
    // The slot is found again: making room, or coming round to a page, may have moved entries back into it.
    this.keys.list(number, hash);
  }

  /** Whether the entry, not past its TTL, holds this answer already: a miss, or the same ETag over a body of the same length. */
  private holdsSame(number: number, answer: { readonly body: Buffer; readonly etag: string } | null): boolean {
    if (this.ttlMs > 0 && this.now() - this.storedAt[number]! > this.ttlMs) return false;
    const body = this.bodyBytes[number]!;
    if (answer === null || body === MISS) return answer === null && body === MISS;
    if (body !== answer.body.length || this.etagBytes[number] !== answer.etag.length) return false;
    const page = this.pages[this.page[number]!]!;
    const etagStart = this.offset[number]! + HEADER_BYTES + this.keyBytes[number]!;
    for (let i = 0; i < answer.etag.length; i += 1) if (page[etagStart + i] !== answer.etag.charCodeAt(i)) return false;
    return true;
  }

  /** Whether the key in the entry's record is the prefix followed by the key (the key table's comparison, `HeldKeys`). */
  keyIs(number: number, prefix: string, key: string): boolean {
    if (this.keyBytes[number] !== prefix.length + key.length) return false;
    const page = this.pages[this.page[number]!]!;
    const start = this.offset[number]! + HEADER_BYTES;
    for (let i = 0; i < prefix.length; i += 1) if (page[start + i] !== prefix.charCodeAt(i)) return false;
    const rest = start + prefix.length;
    for (let i = 0; i < key.length; i += 1) if (page[rest + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  /**
   * Whether a new entry of this hash finds a slot in the key table, once the table is doubled if one
   * more entry would fill half of it (the entries the doubling would put too far are let go).
   */
  private hasFreeSlot(hash: number): boolean {
    if (this.keys.fullWithOneMore()) for (const number of this.keys.grow()) this.release(number);
    return this.keys.hasFreeSlot(hash);
  }

  /** Lets one entry go to make room: the heavy owner's oldest while it holds any, else the oldest of all; false when none is held. */
  private evictOne(heavy: number): boolean {
    const number = this.share.nextToGo(heavy);
    if (number === NO_ENTRY) return false;
    this.remove(number);
    return true;
  }

  /**
   * Where a record of `bytes` bytes goes in the head page; when it does not fit, the ring moves on to
   * its next page: a new one, at its end with the entries' records filling it, else the page it comes
   * round to, made over by `recycle` for the heavy owner (NO_OWNER: none); once a page made over gives no room, the ring takes a page more
   * when it can. If it goes all the way round without room (every page full of entries it keeps),
   * the page it comes to next keeps nothing.
   */
  private append(bytes: number, heavy: number): number {
    for (let turned = 0; this.filled[this.head]! + bytes > this.pageBytes; turned += 1) {
      let next = (this.head + 1) % this.ringPages;
      if (next !== this.tail) {
        this.filled[next] = 0;
        this.pageLive[next] = 0;
      } else {
        // A page made over that gave no room (the entries kept in it filled it) counts as a full ring
        // too; a tail page whose entries have all gone is written over whatever the rest hold.
        const full = turned > 0 || this.liveRecordBytes + bytes > FULL_SHARE * this.ringPages * this.pageBytes;
        if (this.pageLive[this.tail] !== 0 && this.head === this.ringPages - 1 && this.ringPages < this.maxPages && full) {
          next = this.ringPages;
          this.ringPages += 1;
          this.filled[next] = 0;
          this.pageLive[next] = 0;
        } else {
          this.recycle(turned < this.ringPages ? heavy : NO_OWNER);
        }
      }
      this.head = next;
    }
    this.pages[this.head] ??= this.reserved.pop() ?? Buffer.allocUnsafeSlow(this.pageBytes);
    const at = this.filled[this.head]!;
    this.filled[this.head] = at + bytes;
    this.pageLive[this.head] = this.pageLive[this.head]! + bytes;
    return at;
  }

  /**
   * Makes over the page the ring has come round to (the tail): the entries the share rule spares
   * (with a heavy owner, the other owners') not past their TTL are moved to the page's start and
   * kept, and the rest go; otherwise (NO_OWNER) every entry in it goes. The next page becomes the tail.
   */
  private recycle(heavy: number): void {
    const { tail } = this;
    const page = this.pages[tail]!;
    // Every record in a page none of whose entries is held is passed over: nothing to read.
    const end = this.pageLive[tail] === 0 ? 0 : this.filled[tail]!;
    const now = heavy !== NO_OWNER && this.ttlMs > 0 ? this.now() : 0;
    let written = 0;
    for (let at = 0; at < end;) {
      const number = page.readUInt32LE(at);
      const length = page.readUInt32LE(at + 4);
      // A record whose entry has gone since (its number may be another entry's now) is passed over.
      if (this.page[number] === tail && this.offset[number] === at) {
        const keep = this.share.spares(number, heavy) && !(this.ttlMs > 0 && now - this.storedAt[number]! > this.ttlMs);
        if (keep) {
          // Moved towards the page's start, over records already passed: the copy reads nothing it wrote.
          if (written !== at) page.copy(page, written, at, at + length);
          this.offset[number] = written;
          written += length;
        } else {
          this.remove(number);
        }
      }
      at += length;
    }
    this.filled[tail] = written;
    this.tail = (tail + 1) % this.ringPages;
  }

  private remove(number: number): void {
    this.keys.unlist(number);
    this.release(number);
  }

  /** Lets go of everything the ring holds of an entry out of the key table. */
  private release(number: number): void {
    const recordBytes = this.recordBytesOf(number);
    this.liveRecordBytes -= recordBytes;
    this.pageLive[this.page[number]!] = this.pageLive[this.page[number]!]! - recordBytes;
    this.large[number] = undefined;
    this.heldBytes -= this.copies.drop(number);
    this.page[number] = NOWHERE;
    this.offset[number] = NOWHERE;
    const size = this.sizeOf(this.bodyBytes[number]!);
    this.heldBytes -= size;
    this.share.remove(number, size);
    this.freeNumbers.push(number);
  }

  /** What the entry's record takes in its page. */
  private recordBytesOf(number: number): number {
    const body = this.bodyBytes[number]!;
    return HEADER_BYTES + this.keyBytes[number]! + this.etagBytes[number]! + (body === MISS || this.large[number] !== undefined ? 0 : body);
  }

  /** A number no entry has had yet, the tables grown to hold it. */
  private newNumber(): number {
    const number = this.nextNumber;
    this.nextNumber += 1;
    if (number >= this.page.length) {
      const length = Math.max(1024, this.page.length * 2);
      this.page = grown(this.page, new Int32Array(length));
      this.offset = grown(this.offset, new Int32Array(length));
      this.keyBytes = grown(this.keyBytes, new Int32Array(length));
      this.etagBytes = grown(this.etagBytes, new Int32Array(length));
      this.bodyBytes = grown(this.bodyBytes, new Int32Array(length));
      this.storedAt = grown(this.storedAt, new Float64Array(length));
      this.keys.growEntries(length);
      this.share.growEntries(length);
    }
    return number;
  }
}

/** A key the ring can hold and compare as one byte a character. */
function isByteString(key: string): boolean {
  for (let i = 0; i < key.length; i += 1) if (key.charCodeAt(i) > 0xff) return false;
  return true;
}

/** An ETag the ring can hold as one byte a character: printable ASCII, as every ETag this service makes. */
const PLAIN_ETAG = /^[\x20-\x7e]{0,200}$/;

/**
 * A body the ring keeps as it is, holding no memory beyond its own bytes: one that is a view into a
 * larger buffer (the bytes the database driver read, several rows' worth) is copied first.
 */
function ownBytes(body: Buffer): Buffer {
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return body;
  const own = Buffer.allocUnsafeSlow(body.length);
  body.copy(own);
  return own;
}
