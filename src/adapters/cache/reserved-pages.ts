import { Buffer } from 'node:buffer';

/** Pages are reserved when the ring is made up to this many bytes (a larger bound reserves none). */
const MOST_RESERVED_BYTES = 16 * 1024 ** 3;
/** Reserved pages are cut from allocations of this many bytes at most. */
const RESERVED_CHUNK_BYTES = 1024 * 1024 * 1024;

/**
 * Allocates now the `count` pages of `pageBytes` the ring's byte bound allows, to be written when the
 * ring first reaches each: answered last first, so that `pop` hands them out in the order allocated.
 * V8 counts memory outside its heap when it is allocated, toward the point where it starts a full
 * collection: a page allocated every 190 answers or so while the ring filled (1 MB pages of 5 KB
 * answers) set off a full collection every second or so, whose marking and final pause
 * lengthened the tail of the answers waiting behind them. An allocated page takes address space
 * only: the system gives it memory as it is written. The pages are cut from a few large
 * allocations (RESERVED_CHUNK_BYTES), not allocated one by one: V8 may start a full collection
 * at each allocation outside its heap past its limit: 512 pages of 1 MB allocated one by one set
 * off some six full collections a ring made (0.35 s each with a heap of 300,000 small objects, by
 * hand), in one allocation about one (18 ms).
 * Where the system refuses the address space, the pages not reserved are allocated when the ring
 * reaches them, as before.
 */
export function reservedPages(count: number, pageBytes: number): Buffer[] {
  const reserved: Buffer[] = [];
  if (count * pageBytes > MOST_RESERVED_BYTES) return reserved;
  const pagesPerChunk = Math.max(1, Math.floor(RESERVED_CHUNK_BYTES / pageBytes));
  try {
    for (let first = 0; first < count; first += pagesPerChunk) {
      const pages = Math.min(pagesPerChunk, count - first);
      const chunk = Buffer.allocUnsafeSlow(pages * pageBytes);
      for (let i = 0; i < pages; i += 1) reserved.push(chunk.subarray(i * pageBytes, (i + 1) * pageBytes));
    }
  } catch {
    // Out of address space: the rest of the pages are allocated as the ring reaches them.
  }
  // Taken from the end, so the first page the ring reaches is the first reserved.
  return reserved.reverse();
}
