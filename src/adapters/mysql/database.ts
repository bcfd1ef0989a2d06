import type { ColumnType, Generated } from 'kysely';
import type { KeyMode } from '../../domain/api-key.js';
import type { LookupResult } from '../../domain/lookup-result.js';

/** A JSON column: written as JSON text, read back parsed (mysql2 parses MariaDB JSON). */
type Json<T> = ColumnType<T, string, string>;
/** Set by the database on insert unless given. */
type CreatedAt = ColumnType<Date, Date | undefined, never>;

export interface PartnersTable {
  id: string;
  name: string;
  /** The position of the partner's latest change in its feed. */
  feed_seq: ColumnType<number, number | undefined, number>;
  /** The newest position of a deleted product dropped from the feed: older cursors are expired. */
  feed_horizon: ColumnType<number, number | undefined, number>;
  /** 1 when the partner's feed was served before the deployment signed its cursors (migration 0012 alone sets it). */
  feed_before_signing: ColumnType<number, never, never>;
  /** The hash of the source its rows were last imported from (`catalogSourceHash`); null when not known to match them. */
  source_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A partner's changes feed: one row per product, at its latest change; deleted ones kept a while as tombstones. */
/** A deleted product, listed in its partner's changes feed until the tombstone is dropped. */
export interface ProductTombstonesTable {
  partner_id: string;
  sku: string;
  seq: number;
  product_id: number;
  deleted_at: Date;
}

/** Only the SHA-256 of a key is ever stored; `origin` tells file keys from CLI-issued ones. */
export interface ApiKeysTable {
  id: string;
  partner_id: string;
  sha256: string;
  label: string | null;
  origin: 'catalog' | 'cli';
  /** Which catalog the key reads: its partner's (live) or its sandbox (test). */
  mode: ColumnType<KeyMode, KeyMode | undefined, KeyMode>;
  created_at: CreatedAt;
  revoked_at: Date | null;
  /** Written in batches by each instance (at most a minute behind); a later time never gives way to an earlier. */
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The key-change number of the key's last change (key-change-sequence.ts); 0 for rows older than the counter. */
  changed_seq: ColumnType<number, number | undefined, number>;
}

/** The one counter every key change takes its number from: a single row, id 1. */
export interface KeyChangeSequenceTable {
  id: number;
  seq: number;
}

/**
 * Products, videos and PDP entries are kept by identity and content hash only: an import compares
 * hashes to skip what is unchanged, and a lookup reads the stored answer, which holds the content.
 */
export interface ProductsTable {
  id: Generated<number>;
  partner_id: string;
  sku: string;
  content_hash: string;
}

/** The whole answer to a lookup of a product, written by the import that changed its sources. */
export interface ProductLookupsTable {
  product_id: number;
  /** Hash of everything `lookup` is built from (IDs and content hashes); null when the migration built it. */
  lookup_hash: string | null;
  lookup: Json<LookupResult>;
  /** The ETag a lookup of `lookup` sends; null until an import writes the answer. */
  etag: string | null;
  partner_id: string;
  /** The product's position in its partner's changes feed: that of the answer's latest change. */
  feed_seq: number;
  changed_at: Date;
}

export interface VideosTable {
  id: Generated<number>;
  partner_id: string;
  ref: string;
  product_id: number;
  content_hash: string;
}

export interface PdpEntriesTable {
  id: Generated<number>;
  product_id: number;
  /** SHA-256 of the page's URL: the identity (product, page) as an indexable key of any URL length. */
  pdp_url_hash: string;
  /** SHA-256 of the entry's JSON-LD text, to count the entries an import regenerated; null without one. */
  json_ld_hash: string | null;
  content_hash: string;
}

/** A partner admin; the password as its scrypt hash only. */
export interface PartnerAdminsTable {
  id: string;
  partner_id: string;
  email: string;
  password_hash: string;
  created_at: Date;
}

/** An invitation, by the SHA-256 of its token. */
export interface AdminInvitationsTable {
  token_hash: string;
  partner_id: string;
  email: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/** A signed-in session, by the SHA-256 of its id. */
export interface AdminSessionsTable {
  id_hash: string;
  admin_id: string;
  partner_id: string;
  email: string;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
}

export interface AdminSignInFailuresTable {
  id: Generated<number>;
  email: string;
  failed_at: Date;
}

export interface AdminSignInLocksTable {
  email: string;
  locked_until: Date;
}

export interface AuditEventsTable {
  id: Generated<number>;
  at: Date;
  partner_id: string | null;
  admin_email: string | null;
  action: string;
  key_id: string | null;
  endpoint_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A partner's webhook endpoint; its secrets are kept as they are, since messages are signed with them. */
export interface WebhookEndpointsTable {
  id: string;
  partner_id: string;
  url: string;
  description: string | null;
  status: 'enabled' | 'disabled';
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  created_at: Date;
}

/** A webhook message: the exact body every attempt of it signs and sends. */
export interface WebhookMessagesTable {
  id: string;
  partner_id: string;
  type: 'catalog.changed' | 'webhook.test';
  body: string;
  created_at: Date;
  /** The traceparent of the import that queued it, for its attempts' spans to link to; null when it was not traced. */
  traceparent: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A message's delivery to one endpoint; a worker holds it by its claim until the claim expires. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  message_id: string;
  endpoint_id: string;
  attempts: ColumnType<number, number | undefined, number>;
  state: 'pending' | 'delivered' | 'failed';
  next_attempt_at: Date;
  claim_token: string | null;
  claim_expires_at: Date | null;
  created_at: Date;
  /** Attempts at the message to the endpoint by its earlier deliveries when this one was queued (0 for a first delivery). */
  earlier_attempts: ColumnType<number, number | undefined, number>;
  /** 1 when a resend queued it. */
  resend: ColumnType<number, number | undefined, number>;
}

/** One attempt, for the delivery log; `excerpt` holds at most the first 1 KiB of the answer. */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  endpoint_id: string;
  attempt: number;
  at: Date;
  status: number | null;
  error: string | null;
  duration_ms: number;
  excerpt: Buffer;
}

/** A secret of the deployment, made once by the first instance that needs it (base64url). */
export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: Date;
}

export interface Database {
  partners: PartnersTable;
  api_keys: ApiKeysTable;
  key_change_sequence: KeyChangeSequenceTable;
  products: ProductsTable;
  product_lookups: ProductLookupsTable;
  videos: VideosTable;
  pdp_entries: PdpEntriesTable;
  product_tombstones: ProductTombstonesTable;
  partner_admins: PartnerAdminsTable;
  admin_invitations: AdminInvitationsTable;
  admin_sessions: AdminSessionsTable;
  admin_sign_in_failures: AdminSignInFailuresTable;
  admin_sign_in_locks: AdminSignInLocksTable;
  audit_events: AuditEventsTable;
  service_secrets: ServiceSecretsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
