import { isAscii, isUtf8 } from 'node:buffer';

/** A read's complete characters, checked as UTF-8, and the file's byte their text starts at. */
export interface Utf8Text {
  readonly text: string;
  readonly firstByte: number;
}

/** A read that breaks UTF-8: the text before the first byte that does, and that byte, where it is. */
export interface Utf8Fault {
  readonly text: string;
  readonly firstByte: number;
  readonly badAt: number;
  readonly bad: Uint8Array;
}

/**
 * A file's reads as text, a read at a time: the characters each completes (a character a read
 * begins is finished by the next), checked by node's validator and decoded by `toString` (a fatal
 * TextDecoder took eight times as long), as Latin-1 when it is all ASCII; a byte order mark opening
 * the file is dropped, as JSON's standard allows.
 */
export class Utf8Reads {
  /** The bytes read so far. */
  offset = 0;
  /** The last read's bytes that begin a character it did not finish. */
  private tail: Uint8Array = new Uint8Array(0);
  /** The bytes of the last text that are to be decoded again, before the next read's (`again`). */
  private repeated: Uint8Array = new Uint8Array(0);
  /** The bytes the last text was decoded from. */
  private last: Uint8Array = new Uint8Array(0);

  /** Bytes of a character begun and not finished when the file ended there. */
  get pending(): number {
    return this.tail.length;
  }

  /** The end of the last text is to start the next one too: decoded again with it, so the next text is one string. */
  again(text: string): void {
    this.repeated = Buffer.from(this.last.subarray(this.last.length - Buffer.byteLength(text)));
  }

  next(bytes: Buffer): Utf8Text | Utf8Fault {
    const before = this.repeated.length + this.tail.length;
    const joined = before === 0 ? bytes : Buffer.concat([this.repeated, this.tail, bytes]);
    const joinedAt = this.offset - before;
    this.repeated = new Uint8Array(0);
    const start = joinedAt === 0 && startsWithBom(joined) ? 3 : 0;
    const pending = incompleteTail(joined);
    const end = joined.length - pending.length;
    const firstByte = joinedAt + start;
    if (!isUtf8(joined.subarray(start, end))) {
      const bad = firstInvalidUtf8(joined);
      return { text: joined.toString('utf8', start, bad), firstByte, badAt: joinedAt + bad, bad: joined.subarray(bad, bad + 1) };
    }
    this.tail = pending;
    this.offset += bytes.length;
    this.last = joined.subarray(start, end);
    // ASCII decodes the same as Latin-1, which node decodes five times as fast as UTF-8.
    return { text: joined.toString(isAscii(this.last) ? 'latin1' : 'utf8', start, end), firstByte };
  }
}

const startsWithBom = (bytes: Uint8Array): boolean => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;

export function invalidUtf8(at: number, bytes: Uint8Array, place: string): string {
  const utf16 = at === 0 && (bytes[0] === 0xff || bytes[0] === 0xfe);
  return `not valid UTF-8 at byte ${at}, ${place} (0x${bytes[0]!.toString(16).padStart(2, '0')})${utf16 ? ': is the file UTF-16? Save it as UTF-8' : ''}`;
}

/** Bytes a UTF-8 sequence led by this byte has; 0 for a byte that cannot lead one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * The end of the bytes that begins a character they do not finish, and could still be one; empty
 * otherwise (a byte that breaks UTF-8 there is left with the rest, to be found at once).
 */
function incompleteTail(bytes: Uint8Array): Uint8Array {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const begun = bytes.slice(bytes.length - back);
    return sequenceLength(byte) > back && validContinuations(begun) ? begun : new Uint8Array(0);
  }
  return new Uint8Array(0);
}

/** Whether the bytes after a sequence's lead are what may follow it (the ranges `firstInvalidUtf8` checks). */
function validContinuations(bytes: Uint8Array): boolean {
  for (let k = 1; k < bytes.length; k++) if (!continues(bytes[0]!, k, bytes[k]!)) return false;
  return true;
}

/** Whether the byte may be the k-th of a sequence led by `lead`. */
function continues(lead: number, k: number, byte: number): boolean {
  // The second byte's range also rules out overlong forms, surrogates and code points past U+10FFFF.
  const low = k > 1 ? 0x80 : lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  const high = k > 1 ? 0xbf : lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  return byte >= low && byte <= high;
}

/** Where the first byte that breaks UTF-8 is (the decoder says only that one does). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const length = sequenceLength(bytes[i]!);
    if (length === 0) return i;
    for (let k = 1; k < length; k++) {
      const byte = bytes[i + k];
      if (byte === undefined || !continues(bytes[i]!, k, byte)) return i;
    }
    i += length;
  }
  return bytes.length;
}
