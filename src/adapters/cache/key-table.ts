import { principalOf, type KeyMode, type Principal } from '../../domain/api-key.js';

/** The bytes of a SHA-256. */
const HASH_BYTES = 32;
/** A slot of an index that holds no entry; any other value is an entry's number + 1. */
const NO_ENTRY = 0;
const FIRST_CAPACITY = 1_024;
const MODES: readonly KeyMode[] = ['live', 'test'];

/**
 * Live keys by hash and by key id, held in typed arrays rather than objects: a million keys take
 * about 100 MB instead of about 400 MB of maps, strings and objects, and the garbage collector has
 * nothing of them to walk. Each key is an entry: its hash's 32 bytes, its id's characters in one
 * arena, its partner (an index into the partners met) and mode. Two open-addressing indexes (linear
 * probing, at most half full, deletion by shifting back) find an entry by hash and by id. A key's
 * Principal is made the first time it is asked for and kept until the key changes, so a key in use
 * costs no allocation per request, and the same key always answers with the same object.
 */
export class KeyTable {
  private capacity = FIRST_CAPACITY;
  private count = 0;
  /** Entries handed out so far; those freed since are in `freed`. */
  private allocated = 0;
  private readonly freed: number[] = [];
  private hashes = new Uint8Array(FIRST_CAPACITY * HASH_BYTES);
  private partnerOf = new Uint32Array(FIRST_CAPACITY);
  private modeOf = new Uint8Array(FIRST_CAPACITY);
  private idStart = new Uint32Array(FIRST_CAPACITY);
  private idLength = new Uint16Array(FIRST_CAPACITY);
  private principals: (Principal | undefined)[] = new Array<Principal | undefined>(FIRST_CAPACITY);
  /** Every entry's id, one after another, as UTF-16 code units; `idGarbage` of them belong to freed entries. */
  private idChars = new Uint16Array(FIRST_CAPACITY * 16);
  private idUsed = 0;
  private idGarbage = 0;
  private byHash = new Uint32Array(FIRST_CAPACITY * 2);
  private byId = new Uint32Array(FIRST_CAPACITY * 2);
  /** Partner ids (and their sandboxes' catalog ids) met, each held once whatever its number of keys. */
  private readonly partners: string[] = [];
  private readonly sandboxes: string[] = [];
  private readonly partnerIndex = new Map<string, number>();

  get size(): number {
    return this.count;
  }

  /** The live key with this hash (64 lowercase hex characters), or undefined. */
  get(sha256: string): Principal | undefined {
    const entry = this.findHash(sha256);
    return entry < 0 ? undefined : this.principal(entry);
  }

  /** The live key with this id, or undefined. */
  getById(keyId: string): Principal | undefined {
    const entry = this.findId(keyId);
    return entry < 0 ? undefined : this.principal(entry);
  }

  /** Holds the key as given, in place of what was held under its id, and of any other key held under its hash. */
  set(keyId: string, partnerId: string, mode: KeyMode, sha256: string): void {
    if (!isHex(sha256)) throw new Error(`a key hash is 64 lowercase hex characters, not ${sha256.length} characters`);
    this.delete(keyId);
    const other = this.findHash(sha256);
    if (other >= 0) this.free(other);
    if (this.freed.length === 0 && this.allocated === this.capacity) this.grow();
    const entry = this.freed.pop() ?? this.allocated++;
    writeHex(this.hashes, entry * HASH_BYTES, sha256);
    this.partnerOf[entry] = this.partnerNumber(partnerId);
    this.modeOf[entry] = MODES.indexOf(mode);
    this.storeId(entry, keyId);
    this.principals[entry] = undefined;
    this.insertSlot(this.byHash, hashSlotOf(this.hashes, entry * HASH_BYTES), entry);
    this.insertSlot(this.byId, idHash(keyId), entry);
    this.count += 1;
  }

  /** Lets go of the key with this id, if held. */
  delete(keyId: string): void {
    const entry = this.findId(keyId);
    if (entry >= 0) this.free(entry);
  }

  private principal(entry: number): Principal {
    let principal = this.principals[entry];
    if (principal === undefined) {
      const start = this.idStart[entry]!;
      const keyId = String.fromCharCode(...this.idChars.subarray(start, start + this.idLength[entry]!));
      const mode = MODES[this.modeOf[entry]!]!;
      const partner = this.partnerOf[entry]!;
      principal = { keyId, partnerId: this.partners[partner]!, mode, catalogId: mode === 'live' ? this.partners[partner]! : this.sandboxes[partner]! };
      this.principals[entry] = principal;
    }
    return principal;
  }

  private partnerNumber(partnerId: string): number {
    let number = this.partnerIndex.get(partnerId);
    if (number === undefined) {
      number = this.partners.length;
      this.partners.push(partnerId);
      this.sandboxes.push(principalOf('', partnerId, 'test').catalogId);
      this.partnerIndex.set(partnerId, number);
    }
    return number;
  }

  private findHash(sha256: string): number {
    if (sha256.length !== HASH_BYTES * 2) return -1;
    const mask = this.byHash.length - 1;
    for (let slot = hexSlot(sha256) & mask; ; slot = (slot + 1) & mask) {
      const held = this.byHash[slot]!;
      if (held === NO_ENTRY) return -1;
      if (hexEquals(this.hashes, (held - 1) * HASH_BYTES, sha256)) return held - 1;
    }
  }

  private findId(keyId: string): number {
    const mask = this.byId.length - 1;
    for (let slot = idHash(keyId) & mask; ; slot = (slot + 1) & mask) {
      const held = this.byId[slot]!;
      if (held === NO_ENTRY) return -1;
      if (this.idEquals(held - 1, keyId)) return held - 1;
    }
  }

  private idEquals(entry: number, keyId: string): boolean {
    const length = this.idLength[entry]!;
    if (length !== keyId.length) return false;
    const start = this.idStart[entry]!;
    for (let i = 0; i < length; i += 1) if (this.idChars[start + i] !== keyId.charCodeAt(i)) return false;
    return true;
  }

  private free(entry: number): void {
    this.removeSlot(this.byHash, entry, (held) => hashSlotOf(this.hashes, held * HASH_BYTES));
    this.removeSlot(this.byId, entry, (held) => idHashOfChars(this.idChars, this.idStart[held]!, this.idLength[held]!));
    this.idGarbage += this.idLength[entry]!;
    this.principals[entry] = undefined;
    this.freed.push(entry);
    this.count -= 1;
  }

  private insertSlot(index: Uint32Array, home: number, entry: number): void {
    const mask = index.length - 1;
    let slot = home & mask;
    while (index[slot] !== NO_ENTRY) slot = (slot + 1) & mask;
    index[slot] = entry + 1;
  }

  /** Takes the entry out of the index, shifting back the entries after it that probed past its slot. */
  private removeSlot(index: Uint32Array, entry: number, homeOf: (entry: number) => number): void {
    const mask = index.length - 1;
    let hole = -1;
    for (let slot = homeOf(entry) & mask; ; slot = (slot + 1) & mask) {
      if (index[slot] === entry + 1) {
        hole = slot;
        break;
      }
      if (index[slot] === NO_ENTRY) return;
    }
    index[hole] = NO_ENTRY;
    for (let slot = (hole + 1) & mask; index[slot] !== NO_ENTRY; slot = (slot + 1) & mask) {
      const held = index[slot]! - 1;
      const home = homeOf(held) & mask;
      // It may move back to the hole if its home is not after the hole (cyclically, up to its slot).
      const movable = hole <= slot ? home <= hole || home > slot : home <= hole && home > slot;
      if (movable) {
        index[hole] = held + 1;
        index[slot] = NO_ENTRY;
        hole = slot;
      }
    }
  }

  private storeId(entry: number, keyId: string): void {
    // A reused entry's old id is garbage already: a compaction now must not copy it.
    this.idLength[entry] = 0;
    if (this.idUsed + keyId.length > this.idChars.length) this.makeRoomForIds(keyId.length);
    const start = this.idUsed;
    for (let i = 0; i < keyId.length; i += 1) this.idChars[start + i] = keyId.charCodeAt(i);
    this.idStart[entry] = start;
    this.idLength[entry] = keyId.length;
    this.idUsed += keyId.length;
  }

  /** Moves every live entry's id to the front, dropping freed ones' characters; grows the arena if that is not room enough. */
  private makeRoomForIds(wanted: number): void {
    const live = this.idUsed - this.idGarbage;
    let size = this.idChars.length;
    while (live + wanted > size / 2) size *= 2;
    const chars = new Uint16Array(size);
    let used = 0;
    const isFree = new Uint8Array(this.allocated);
    for (const entry of this.freed) isFree[entry] = 1;
    for (let entry = 0; entry < this.allocated; entry += 1) {
      if (isFree[entry] === 1) continue;
      const start = this.idStart[entry]!;
      const length = this.idLength[entry]!;
      chars.set(this.idChars.subarray(start, start + length), used);
      this.idStart[entry] = used;
      used += length;
    }
    this.idChars = chars;
    this.idUsed = used;
    this.idGarbage = 0;
  }

  /** Twice the entries, and indexes made anew for them. */
  private grow(): void {
    const capacity = this.capacity * 2;
    this.hashes = copied(new Uint8Array(capacity * HASH_BYTES), this.hashes);
    this.partnerOf = copied(new Uint32Array(capacity), this.partnerOf);
    this.modeOf = copied(new Uint8Array(capacity), this.modeOf);
    this.idStart = copied(new Uint32Array(capacity), this.idStart);
    this.idLength = copied(new Uint16Array(capacity), this.idLength);
    const principals = new Array<Principal | undefined>(capacity);
    for (let entry = 0; entry < this.allocated; entry += 1) principals[entry] = this.principals[entry];
    this.principals = principals;
    this.capacity = capacity;
    this.byHash = new Uint32Array(capacity * 2);
    this.byId = new Uint32Array(capacity * 2);
    const isFree = new Uint8Array(this.allocated);
    for (const entry of this.freed) isFree[entry] = 1;
    for (let entry = 0; entry < this.allocated; entry += 1) {
      if (isFree[entry] === 1) continue;
      this.insertSlot(this.byHash, hashSlotOf(this.hashes, entry * HASH_BYTES), entry);
      this.insertSlot(this.byId, idHashOfChars(this.idChars, this.idStart[entry]!, this.idLength[entry]!), entry);
    }
  }
}

function copied<T extends Uint8Array | Uint16Array | Uint32Array>(into: T, from: T): T {
  into.set(from);
  return into;
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

function isHex(text: string): boolean {
  if (text.length !== HASH_BYTES * 2) return false;
  for (let i = 0; i < text.length; i += 1) if (hexValue(text.charCodeAt(i)) < 0) return false;
  return true;
}

function writeHex(into: Uint8Array, at: number, hex: string): void {
  for (let i = 0; i < HASH_BYTES; i += 1) into[at + i] = (hexValue(hex.charCodeAt(2 * i)) << 4) | hexValue(hex.charCodeAt(2 * i + 1));
}

function hexEquals(bytes: Uint8Array, at: number, hex: string): boolean {
  for (let i = 0; i < HASH_BYTES; i += 1) {
    if (bytes[at + i] !== ((hexValue(hex.charCodeAt(2 * i)) << 4) | hexValue(hex.charCodeAt(2 * i + 1)))) return false;
  }
  return true;
}

/** A SHA-256 is uniformly random: its first four bytes are a hash as good as any. */
function hexSlot(hex: string): number {
  let slot = 0;
  for (let i = 0; i < 8; i += 1) slot = (slot << 4) | Math.max(0, hexValue(hex.charCodeAt(i)));
  return slot >>> 0;
}

function hashSlotOf(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

/** FNV-1a over the id's UTF-16 code units. */
function idHash(keyId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < keyId.length; i += 1) hash = Math.imul(hash ^ keyId.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

function idHashOfChars(chars: Uint16Array, start: number, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < start + length; i += 1) hash = Math.imul(hash ^ chars[i]!, 0x01000193);
  return hash >>> 0;
}
