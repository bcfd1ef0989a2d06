const EMPTY = 0;
const encoder = new TextEncoder();
/**
 * A map starts small and doubles as it fills: a reader makes two per partner, and at 88 KB each,
 * zeroing and collecting them took about 40 % of re-importing 10,000 partners of 3 products.
 */
const INITIAL_BYTES = 1 << 8;
const INITIAL_ENTRIES = 1 << 4;

/**
 * Strings, each with a number, held in a few typed arrays rather than one object per entry: about
 * 20 bytes for a short key instead of about 70 in a `Map`. A catalog reader keeps one per partner
 * for its SKUs and one for its video refs, and a partner may have millions of each.
 */
export class CompactStringMap {
  /** The keys' UTF-8 bytes, one after another. */
  private bytes = new Uint8Array(INITIAL_BYTES);
  private used = 0;
  /** Per entry: where its key starts in `bytes`, its length, and its number. */
  private starts = new Uint32Array(INITIAL_ENTRIES);
  private lengths = new Uint32Array(INITIAL_ENTRIES);
  private values = new Float64Array(INITIAL_ENTRIES);
  /** Open addressing: entry index + 1, or EMPTY. Never more than half full. */
  private slots = new Uint32Array(INITIAL_ENTRIES * 2);
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(key: string): boolean {
    return this.find(key) >= 0;
  }

  get(key: string): number | undefined {
    const entry = this.find(key);
    return entry < 0 ? undefined : this.values[entry];
  }

  /** Adds the key with its number, or gives a key already held its new number. */
  set(key: string, value: number): this {
    const entry = this.find(key);
    if (entry >= 0) {
      this.values[entry] = value;
      return this;
    }
    // `find` left the key's bytes just past the last key, and its slot in `probe`.
    if (this.count === this.starts.length) this.growEntries();
    const index = this.count++;
    this.starts[index] = this.used;
    this.lengths[index] = this.keyLength;
    this.values[index] = value;
    this.used += this.keyLength;
    this.slots[this.probe] = index + 1;
    if (this.count * 2 > this.slots.length) this.rehash();
    return this;
  }

  private keyLength = 0;
  private probe = 0;

  /** The entry holding `key`, or -1; either way the key's bytes are left just past the last key. */
  private find(key: string): number {
    this.reserve(key.length * 3);
    const length = encoder.encodeInto(key, this.bytes.subarray(this.used)).written;
    this.keyLength = length;
    const mask = this.slots.length - 1;
    let slot = this.hashAt(this.used, length) & mask;
    for (;;) {
      const held = this.slots[slot]!;
      if (held === EMPTY) {
        this.probe = slot;
        return -1;
      }
      if (this.equalsAt(held - 1, this.used, length)) return held - 1;
      slot = (slot + 1) & mask;
    }
  }

  /** FNV-1a over the bytes, as an unsigned 32-bit number. */
  private hashAt(start: number, length: number): number {
    let hash = 0x811c9dc5;
    for (let i = start; i < start + length; i += 1) hash = Math.imul(hash ^ this.bytes[i]!, 0x01000193);
    return hash >>> 0;
  }

  private equalsAt(entry: number, start: number, length: number): boolean {
    if (this.lengths[entry] !== length) return false;
    const from = this.starts[entry]!;
    for (let i = 0; i < length; i += 1) if (this.bytes[from + i] !== this.bytes[start + i]) return false;
    return true;
  }

  private reserve(extra: number): void {
    if (this.used + extra <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (this.used + extra > size) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.bytes.subarray(0, this.used));
    this.bytes = grown;
  }

  private growEntries(): void {
    const size = this.starts.length * 2;
    const grow = <T extends Uint32Array | Float64Array>(from: T, make: (n: number) => T): T => {
      const to = make(size);
      to.set(from);
      return to;
    };
    this.starts = grow(this.starts, (n) => new Uint32Array(n));
    this.lengths = grow(this.lengths, (n) => new Uint32Array(n));
    this.values = grow(this.values, (n) => new Float64Array(n));
  }

  private rehash(): void {
    const slots = new Uint32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let index = 0; index < this.count; index += 1) {
      let slot = this.hashAt(this.starts[index]!, this.lengths[index]!) & mask;
      while (slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      slots[slot] = index + 1;
    }
    this.slots = slots;
  }
}
