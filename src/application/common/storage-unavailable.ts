/**
 * Whether an error says the storage cannot be reached now (no connection, no answer in time, a full
 * queue, a closed pool), as opposed to a fault in what was asked. Storage adapters mark such errors
 * with `storageUnavailable: true`; the HTTP adapter answers them 503 with a time to retry.
 */
export function isStorageUnavailable(error: unknown): boolean {
  return error instanceof Error && (error as { storageUnavailable?: unknown }).storageUnavailable === true;
}
