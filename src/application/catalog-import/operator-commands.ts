import type { KeyMode } from '../../domain/api-key.js';
import type { CatalogPieces } from '../../domain/catalog-source.js';
import type { IssuedInvitation } from '../admin-sign-in/invite-admin.js';
import type { KeyChanges } from '../instances/change-versions.js';
import type { WebhookUseCases } from '../webhooks/webhook-use-cases.js';

/** A key just issued: the key itself is handed to the operator once, never stored. */
export interface IssuedApiKey {
  readonly id: string;
  readonly partner: string;
  readonly mode: KeyMode;
  readonly label: string | null;
  /** The key itself: handed to the operator once, never stored. */
  readonly key: string;
  readonly created_at: Date;
}

/** One of a partner's keys as listed: never a key, never a hash. */
export interface ApiKeyListing {
  readonly id: string;
  readonly mode: KeyMode;
  readonly label: string | null;
  readonly created_at: Date;
  readonly revoked_at: Date | null;
}

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
  /** The same rows of the partners' sandboxes (their own sections, or the bundled demo products). */
  sandbox_products: ImportCounts;
  sandbox_videos: ImportCounts;
  sandbox_pdp_entries: ImportCounts & { regenerated: number };
};

/** What a committed import changed, for the running instances to be told (decisions.md, what an import does). */
export interface ImportChanges {
  /**
   * The catalogs (partner ids and sandbox catalog ids) whose rows or name it wrote or deleted, or
   * whose source it found changed or not known: only their tokens are replaced, so every other
   * partner keeps its cached answers.
   */
  readonly catalogs: readonly string[];
  /** What it did to the keys; null when it changed none, and none is to be announced. */
  readonly keys: KeyChanges | null;
}

/**
 * Tells the instances what an import changed, once it has committed. If it throws, the catalogs it
 * was to tell of are marked not known to match their source, so that importing the same file again
 * changes and tells of them, and the import throws what it threw.
 */
export type AnnounceImport = (changes: ImportChanges, report: ImportReport) => Promise<void>;

/** Told how an import goes, for a person watching a long one. */
export interface ImportProgress {
  /** A product of the file was read, valid or not. */
  productRead(): void;
  /** Products written so far, within the unit of work. */
  productsWritten(total: number): void;
  /** The whole file is read; what is left is the unit of work's end (deletions, keys, commit). */
  startStage(stage: 'finishing'): void;
}

/**
 * An import's phases, as its trace draws them. The file is read, checked and written together, batch
 * by batch (one batch written while the next is read), so they are one phase; then what waits for the
 * file's end (the partners held, the sandboxes, the keys); the unit of work holds both, its commit
 * included; once committed, the running instances are told.
 */
export type ImportPhase = 'unit of work' | 'read and write' | 'finish' | 'announce';

/** How an import is traced, when it is: each phase run inside `phase`, and the context its webhook messages carry. */
export interface ImportTrace {
  /** The import's W3C `traceparent`, stored with its webhook messages for their deliveries to link to; null when not traced. */
  readonly traceparent: string | null;
  phase<T>(phase: ImportPhase, run: () => Promise<T>): Promise<T>;
}

/** What the operator commands need of the storage: the CLI drives it, the composition root supplies one. */
export interface OperatorCommands {
  /** Names of the migrations applied; empty when the schema was current. */
  migrate(): Promise<string[]>;
  /**
   * Imports a catalog read piece by piece (`ImportCatalog`); refuses a bad one with nothing written.
   * Once it has committed, `announce` is told what it changed; `progress` is told how it goes; `trace` draws it.
   */
  importCatalog(pieces: CatalogPieces, announce?: AnnounceImport, progress?: ImportProgress, trace?: ImportTrace): Promise<ImportReport>;
  issueKey(partnerId: string, mode: KeyMode, label: string | null): Promise<IssuedApiKey>;
  revokeKey(keyId: string): Promise<{ id: string; revoked_at: Date }>;
  listKeys(partnerId: string): Promise<ApiKeyListing[]>;
  /** A one-use invitation for a partner admin (`InviteAdmin`); its token is handed out once. */
  inviteAdmin(partnerId: string, email: string): Promise<IssuedInvitation>;
  /** Partners' webhook endpoints, through the same use cases the portal will drive; an operator acts with `partnerId` null. */
  readonly webhooks: WebhookUseCases;
  /** Whether imports and key changes are told to the running instances (Redis is set); instances that share Redis learn of them only so. */
  readonly announcesChanges: boolean;
  close(): Promise<void>;
}
