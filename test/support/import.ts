import type { Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { MysqlCatalogStore } from '../../src/adapters/mysql/mysql-catalog-store.js';
import { MysqlCursorKeys } from '../../src/adapters/mysql/mysql-cursor-keys.js';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import type { CursorKeys } from '../../src/application/changes/cursor-keys.js';
import { ImportCatalog } from '../../src/application/catalog-import/import-catalog.js';
import type { CatalogStore } from '../../src/application/catalog-import/catalog-store.js';
import { systemClock } from '../../src/application/common/clock.js';
import type { ImportReport } from '../../src/application/catalog-import/operator-commands.js';
import type { Catalog, Product } from '../../src/domain/catalog.js';
import { CATALOG_FORMAT } from '../../src/domain/catalog-format.js';
import { piecesOfDocument } from '../../src/domain/catalog-source.js';
import { demoProducts } from '../../src/adapters/catalog-file/catalog-file.js';

/** A validated product written back as its entry. */
function productEntry(p: Product): Record<string, unknown> {
  return {
    sku: p.sku, status: p.status, title: p.title, description: p.description, short_description: p.shortDescription, image: p.image,
    what_text: p.whatText, who_text: p.whoText, why_text: p.whyText, brand: p.brand,
    properties: p.properties.map((property) => ({ name: property.name, value: property.value })),
    videos: p.videos.map((v) => ({
      ref: v.ref, published: v.published, name: v.name, description: v.description, aspect_ratio: v.aspectRatio, length: v.length,
      language: v.language, family_friendly: v.familyFriendly, genre: [...v.genre], keywords: [...v.keywords],
      creator: { name: v.creator.name, job_title: v.creator.jobTitle }, transcript: v.transcript,
      thumbnail_url: v.thumbnailUrl, upload_date: v.uploadDate,
    })),
    pdp_urls: p.pdpUrls.map((e) => ({ pdp_url: e.pdpUrl, retailer: e.retailer, video_ref: e.videoRef, video_file_url: e.videoFileUrl })),
  };
}

/** A validated catalog written back as the `partner-catalog/v1` document it was read from, keys' modes and sandboxes included. */
export function catalogDocument(catalog: Catalog): Record<string, unknown> {
  return {
    format: CATALOG_FORMAT,
    partners: catalog.partners.map((partner) => ({
      id: partner.id,
      name: partner.name,
      api_keys: partner.apiKeys.map((key) => ({ id: key.id, mode: key.mode, sha256: key.sha256, revoked: key.revoked })),
      products: partner.products.map(productEntry),
      // A partner without a section of its own gets the demo products on import: the section stays out.
      ...(partner.sandbox === null ? {} : { sandbox: { products: partner.sandbox.map(productEntry) } }),
    })),
  };
}

/** Imports a document (or a validated catalog) through the use case, as the CLI and a reload do. */
export function importDocument(store: CatalogStore, document: unknown, cursorKeys: CursorKeys = processCursorKeys()): Promise<ImportReport> {
  return new ImportCatalog(store, systemClock, cursorKeys, demoProducts).execute(piecesOfDocument(document));
}

/** Imports a validated catalog into a MySQL database. */
export function importCatalog(db: Kysely<Database>, catalog: Catalog): Promise<ImportReport> {
  return importDocument(new MysqlCatalogStore(db), catalogDocument(catalog), new MysqlCursorKeys(db, { secret: null }));
}
