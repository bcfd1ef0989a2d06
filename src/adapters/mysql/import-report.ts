/** What an import did to one kind of row. A type, not an interface, so it reads as a plain record. */
export type ImportCounts = {
  created: number;
  updated: number;
  unchanged: number;
  /** Rows of an imported partner that the file no longer lists. */
  deleted: number;
};

/** Counts per kind; only PDP entries carry JSON-LD, so only they are `regenerated`. */
export type ImportReport = {
  partners: Omit<ImportCounts, 'deleted'>;
  /** File keys absent from a re-import are `revoked`, never deleted; CLI-issued keys are untouched. */
  api_keys: Omit<ImportCounts, 'deleted'> & { revoked: number };
  products: ImportCounts;
  videos: ImportCounts;
  pdp_entries: ImportCounts & { regenerated: number };
};

export function emptyCounts(): ImportCounts {
  return { created: 0, updated: 0, unchanged: 0, deleted: 0 };
}
