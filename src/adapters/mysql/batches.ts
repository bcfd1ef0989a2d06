/** Batches for multi-row statements: at most `maxRows` rows and about `maxBytes` each. */
export function* batches<T>(items: readonly T[], sizeOf: (item: T) => number, maxRows = 1_000, maxBytes = 4_000_000): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (batch.length > 0 && (batch.length >= maxRows || bytes + size > maxBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}
