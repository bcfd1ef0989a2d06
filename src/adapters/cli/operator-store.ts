import type { Catalog } from '../../domain/catalog.js';

export interface IssuedKey {
  readonly id: string;
  readonly partner: string;
  readonly label: string | null;
  readonly key: string;
  readonly created_at: Date;
}

export interface KeyListing {
  readonly id: string;
  readonly label: string | null;
  readonly created_at: Date;
  readonly revoked_at: Date | null;
}

/** Counts per kind of row, such as `{ products: { created: 3, ... } }`. */
export type ImportSummary = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** What the operator commands need of the storage; the composition root supplies one. */
export interface OperatorStore {
  /** Names of the migrations applied; empty when the schema was current. */
  migrate(): Promise<string[]>;
  importCatalog(catalog: Catalog): Promise<ImportSummary>;
  issueKey(partnerId: string, label: string | null): Promise<IssuedKey>;
  revokeKey(keyId: string): Promise<{ id: string; revoked_at: Date }>;
  listKeys(partnerId: string): Promise<KeyListing[]>;
  close(): Promise<void>;
}
