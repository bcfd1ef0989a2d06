import { Migrator, sql, type Kysely } from 'kysely';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import type { Database } from '../../src/adapters/mysql/database.js';
import { migrationProvider } from '../../src/adapters/mysql/migrations.js';
import { ImportCatalog } from '../../src/application/catalog-import/import-catalog.js';
import type { CatalogImportSession, CatalogStore } from '../../src/application/catalog-import/catalog-store.js';
import type { ImportReport } from '../../src/application/catalog-import/operator-commands.js';
import type { CursorKeys } from '../../src/application/changes/cursor-keys.js';
import { systemClock, type Clock } from '../../src/application/common/clock.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { piecesOfDocument } from '../../src/domain/catalog-source.js';
import { isSandboxCatalog } from '../../src/domain/sandbox.js';
import { pdpEntryHash, pdpUrlHash, productHash, sha256Hex, videoHash } from '../../src/domain/content-hashes.js';
import { generateJsonLd } from '../../src/domain/json-ld.js';

/** Brings the schema to the named migration, as a database that was last migrated then. */
export async function migrateTo(db: Kysely<Database>, name: string): Promise<void> {
  const { error } = await new Migrator({ db, provider: migrationProvider }).migrateTo(name);
  if (error !== undefined) throw error instanceof Error ? error : new Error('migration failed');
}

/** Drops every table, whichever migration made it, Kysely's own included: a database never migrated. */
export async function emptyDatabase(db: Kysely<Database>): Promise<void> {
  // On one connection, as foreign-key checks are off for it alone.
  await db.connection().execute(async (connection) => {
    const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = database()`.execute(connection);
    await sql`set foreign_key_checks = 0`.execute(connection);
    try {
      for (const { name } of rows) await sql`drop table ${sql.table(name)}`.execute(connection);
    } finally {
      await sql`set foreign_key_checks = 1`.execute(connection);
    }
  });
}

/**
 * Empties the database and writes the catalog as imports wrote it before migration 0002: the
 * content in the columns of schema 0001, no stored answers. IDs follow file order from 1.
 */
export async function writeLegacyCatalog(db: Kysely<Database>, catalog: Catalog): Promise<void> {
  await emptyDatabase(db);
  await migrateTo(db, '0001_initial_schema');
  const next = { product: 1, video: 1, entry: 1 };
  for (const partner of catalog.partners) {
    await sql`insert into partners (id, name) values (${partner.id}, ${partner.name})`.execute(db);
    for (const p of partner.products) {
      const productId = next.product++;
      const content = productHash(partner.id, p);
      await sql`insert into products (id, partner_id, sku, status, title, description, short_description, image, what_text, who_text, why_text, brand, properties, content_hash)
        values (${productId}, ${partner.id}, ${p.sku}, ${p.status}, ${p.title}, ${p.description}, ${p.shortDescription}, ${p.image}, ${p.whatText},
          ${p.whoText}, ${p.whyText}, ${p.brand}, ${JSON.stringify(p.properties)}, ${content})`.execute(db);
      const videoHashes = new Map<string, string>();
      for (const [position, v] of p.videos.entries()) {
        const hash = videoHash(partner.id, productId, position, v);
        videoHashes.set(v.ref, hash);
        await sql`insert into videos (id, partner_id, ref, product_id, position, published, name, description, aspect_ratio, length, language, family_friendly, genre, keywords, creator_name, creator_job_title, transcript, content_hash)
          values (${next.video++}, ${partner.id}, ${v.ref}, ${productId}, ${position}, ${v.published}, ${v.name}, ${v.description}, ${v.aspectRatio}, ${v.length},
            ${v.language}, ${v.familyFriendly}, ${JSON.stringify(v.genre)}, ${JSON.stringify(v.keywords)}, ${v.creator.name}, ${v.creator.jobTitle}, ${v.transcript}, ${hash})`.execute(db);
      }
      for (const [position, e] of p.pdpUrls.entries()) {
        const jsonLd = generateJsonLd(e, p, partner.name);
        const text = jsonLd === null ? null : JSON.stringify(jsonLd);
        const hash = pdpEntryHash(productId, position, e, partner.name, content, e.videoRef === null ? null : videoHashes.get(e.videoRef) ?? null);
        await sql`insert into pdp_entries (id, product_id, pdp_url_hash, position, pdp_url, retailer, video_ref, video_file_url, json_ld, json_ld_hash, content_hash)
          values (${next.entry++}, ${productId}, ${pdpUrlHash(e)}, ${position}, ${e.pdpUrl}, ${e.retailer}, ${e.videoRef}, ${e.videoFileUrl},
            ${text}, ${text === null ? null : sha256Hex(text)}, ${hash})`.execute(db);
      }
    }
  }
}

/**
 * Imports a document as the versions before test keys (migration 0014) did, into a database migrated no
 * further than their time: the partners' products, videos, PDP entries and feed. This version's import
 * reads and writes each key's mode, a column those schemas lack, so the document's keys are left out
 * (a test imports them with a later import); and those versions kept no sandbox, so none is written.
 */
export function importBeforeTestKeys(
  store: CatalogStore,
  document: Record<string, unknown>,
  { clock = systemClock, cursorKeys = processCursorKeys() }: { clock?: Clock; cursorKeys?: CursorKeys } = {},
): Promise<ImportReport> {
  const partners = (document.partners as Record<string, unknown>[]).map((partner) => ({ ...partner, api_keys: [] }));
  const asBefore = (session: CatalogImportSession): CatalogImportSession => new Proxy(session, {
    get: (target, name: keyof CatalogImportSession) => {
      if (name === 'apiKeys') return () => Promise.resolve([]);
      // Those schemas have no source hashes: every catalog is new to them, and examined row by row.
      if (name === 'catalogs') return () => Promise.resolve([]);
      if (name === 'saveSourceHashes') return () => Promise.resolve();
      if (name === 'savePartner') return (partnerId: string, partnerName: string) => (isSandboxCatalog(partnerId) ? Promise.resolve() : target.savePartner(partnerId, partnerName));
      return target[name].bind(target);
    },
  });
  const withoutKeysOrSandboxes: CatalogStore = { importing: (work) => store.importing((session) => work(asBefore(session))) };
  return new ImportCatalog(withoutKeysOrSandboxes, clock, cursorKeys, () => Promise.resolve([])).execute(piecesOfDocument({ ...document, partners }));
}
