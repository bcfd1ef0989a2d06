import type { Buffer } from 'node:buffer';

/** An answer's body and ETag, as the ring hands it out. */
export type Answer = { readonly body: Buffer; readonly etag: string };

/** The most ready copies the ring keeps, and the share of its byte bound they may take. */
const MOST_COPIES = 4_096;
const COPIES_SHARE = 1 / 16;

/**
 * The ready copies of the ring's answers (AnswerRing), by entry number. The copy made when an entry
 * is first asked for is kept beside it and handed out again, until the entry goes: a hot answer is
 * copied once, not on every hit (the copy and its allocation outside the heap took most of a hit's
 * time in the ring: 1.9 to 2.3 µs, against 0.24 to 0.31). Nothing writes into a copy, so many
 * sockets may send it at once. The copies kept are counted in the ring's byte bound for their
 * bodies' bytes, and take at most COPIES_SHARE of it and MOST_COPIES objects: a copy that does not
 * fit is handed out and not kept.
 */
export class KeptCopies {
  private readonly copies: (Answer | undefined)[] = [];
  private kept = 0;
  private bytes = 0;
  private readonly maxBytes: number;

  /** Copies for a ring of `ringMaxBytes`. */
  constructor(ringMaxBytes: number) {
    this.maxBytes = Math.floor(ringMaxBytes * COPIES_SHARE);
  }

  /** The copy kept of the entry's answer, or undefined. */
  of(number: number): Answer | undefined {
    return this.copies[number];
  }

  /** Notes that a new entry has no copy yet: written for every entry, so the array stays dense (one written only on hits, at far numbers, became a dictionary). */
  noneFor(number: number): void {
    this.copies[number] = undefined;
  }

  /** Keeps the copy of the entry's answer if the copies' share has room for it: whether it was kept. */
  keep(number: number, answer: Answer): boolean {
    const bytes = answer.body.length;
    if (this.kept >= MOST_COPIES || this.bytes + bytes > this.maxBytes) return false;
    this.copies[number] = answer;
    this.kept += 1;
    this.bytes += bytes;
    return true;
  }

  /** Lets go of the copy kept of the entry, if any: the bytes it took (0 for none). */
  drop(number: number): number {
    const kept = this.copies[number];
    if (kept === undefined) return 0;
    this.copies[number] = undefined;
    this.kept -= 1;
    this.bytes -= kept.body.length;
    return kept.body.length;
  }
}
