import { sql, type Kysely, type Transaction } from 'kysely';
import type { ImportCounts, ImportReport } from '../../application/ports/operator-store.js';
import { TIMEOUTS } from '../../application/timeouts.js';
import type { Catalog, Partner, Product } from '../../domain/catalog.js';
import { generateJsonLd } from '../../domain/json-ld.js';
import { toLookupResult } from '../../domain/lookup-result.js';
import { lookupSourceHash, pdpEntryDraft, productRow, videoRow, type PdpEntryDraft, type ProductRow, type VideoRow } from './catalog-rows.js';
import type { Database } from './database.js';
import { deleteByIds, upsertRows } from './upsert.js';

interface Stored {
  readonly id: number;
  readonly content_hash: string;
}

/** Which rows an import writes, and which stored rows it leaves behind. */
interface Plan<R> {
  readonly write: R[];
  readonly counts: ImportCounts;
  readonly obsoleteIds: number[];
}

function emptyCounts(): ImportCounts {
  return { created: 0, updated: 0, unchanged: 0, deleted: 0 };
}

/** Sorts file rows against stored rows by identity and content hash. */
function plan<R extends { content_hash: string }>(rows: readonly R[], identity: (row: R) => string, stored: ReadonlyMap<string, Stored>): Plan<R> {
  const counts = emptyCounts();
  const write: R[] = [];
  const seen = new Set<number>();
  for (const row of rows) {
    const existing = stored.get(identity(row));
    if (existing === undefined) counts.created += 1;
    else {
      seen.add(existing.id);
      if (existing.content_hash === row.content_hash) {
        counts.unchanged += 1;
        continue;
      }
      counts.updated += 1;
    }
    write.push(row);
  }
  const obsoleteIds = [...stored.values()].map((s) => s.id).filter((id) => !seen.has(id));
  counts.deleted = obsoleteIds.length;
  return { write, counts, obsoleteIds };
}

const byIdentity = <S>(rows: readonly S[], identity: (row: S) => string): Map<string, S> =>
  new Map(rows.map((row) => [identity(row), row]));

const productKey = (row: { partner_id: string; sku: string }): string => `${row.partner_id}/${row.sku}`;
const videoKey = (row: { partner_id: string; ref: string }): string => `${row.partner_id}/${row.ref}`;
const entryKey = (row: { product_id: number; pdp_url_hash: string }): string => `${String(row.product_id)}/${row.pdp_url_hash}`;

/** A file product with what its lookup answer is built from, known once its rows are written. */
interface ProductSources {
  readonly partner: Partner;
  readonly product: Product;
  readonly productId: number;
  readonly row: ProductRow;
  readonly videos: readonly VideoRow[];
  readonly entries: readonly PdpEntryDraft[];
}

const PRODUCT_COLUMNS = [
  'status', 'title', 'description', 'short_description', 'image', 'what_text', 'who_text', 'why_text', 'brand', 'properties', 'content_hash',
] as const;
/** Lookup answers built and written per chunk, so a large import never holds them all at once. */
const LOOKUP_CHUNK = 1_000;

/**
 * The import lock's name, for the database the connection uses: MariaDB's named locks are
 * server-wide, so imports into two databases on one server must not share one name (a hash keeps
 * the name within the 64 characters a lock name may have, whatever the database's name).
 */
export const IMPORT_LOCK = sql<string>`concat('pcat_import:', left(sha2(database(), 256), 48))`;

/**
 * Imports a validated catalog in one transaction: it lands whole or not at all.
 *
 * Rows are upserted by their identities (docs/decisions.md, catalog files), so IDs survive re-imports;
 * rows whose content hash is unchanged are not written. For every partner in the file, the
 * file is the whole truth: its products, videos and PDP entries that the file no longer lists
 * are deleted, and its file-listed keys that the file no longer lists are revoked. Partners
 * absent from the file, and keys issued by the CLI, are left alone. A key revoked once stays
 * revoked: a re-import never brings it back.
 */
export async function importCatalog(db: Kysely<Database>, catalog: Catalog, now = new Date()): Promise<ImportReport> {
  // Imports take turns: a second one waits for the first to commit, then plans against what it wrote.
  // The lock is held on the transaction's own connection until after the commit.
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{ acquired: number | null }>`select get_lock(${IMPORT_LOCK}, ${TIMEOUTS.importLockWaitS}) as acquired`.execute(connection);
    if (rows[0]?.acquired !== 1) throw new Error(`another import has been running for over ${TIMEOUTS.importLockWaitS} s; try again later`);
    try {
      return await connection.transaction().execute((trx) => runImport(trx, catalog, now));
    } finally {
      await sql`select release_lock(${IMPORT_LOCK})`.execute(connection);
    }
  });
}

async function runImport(trx: Transaction<Database>, catalog: Catalog, now: Date): Promise<ImportReport> {
  const report: ImportReport = {
    partners: { created: 0, updated: 0, unchanged: 0 },
    api_keys: { created: 0, updated: 0, unchanged: 0, revoked: 0 },
    products: emptyCounts(),
    videos: emptyCounts(),
    pdp_entries: { ...emptyCounts(), regenerated: 0 },
  };
  const partnerIds = catalog.partners.map((p) => p.id);
  if (partnerIds.length === 0) return report;

  report.partners = await importPartners(trx, catalog.partners);
  report.api_keys = await importApiKeys(trx, catalog.partners, partnerIds, now);

  const productRows = new Map<Product, ProductRow>();
  for (const partner of catalog.partners) for (const product of partner.products) productRows.set(product, productRow(partner.id, product));
  const storedProducts = byIdentity(
    await trx
      .selectFrom('products')
      .leftJoin('product_lookups', 'product_lookups.product_id', 'products.id')
      .select(['products.id', 'products.partner_id', 'products.sku', 'products.content_hash', 'product_lookups.lookup_hash'])
      .where('products.partner_id', 'in', partnerIds)
      .execute(),
    productKey,
  );
  const products = plan([...productRows.values()], productKey, storedProducts);
  await upsertRows(trx, 'products', products.write, PRODUCT_COLUMNS);
  // Products created above have IDs only the database knows; read them back only when there are some.
  const productIds = new Map(
    (products.counts.created === 0
      ? [...storedProducts.values()]
      : await trx.selectFrom('products').select(['id', 'partner_id', 'sku']).where('partner_id', 'in', partnerIds).execute())
      .map((row) => [productKey(row), row.id]),
  );
  const sources: ProductSources[] = [];
  for (const partner of catalog.partners) {
    for (const product of partner.products) {
      const productId = productIds.get(productKey({ partner_id: partner.id, sku: product.sku }));
      const row = productRows.get(product);
      if (productId === undefined || row === undefined) throw new Error(`product ${partner.id}/${product.sku} was not stored`);
      const videos = product.videos.map((video, i) => videoRow(partner.id, productId, i, video));
      const videoHashes = new Map(videos.map((video) => [video.ref, video.content_hash]));
      const entries = product.pdpUrls.map((entry, i) => {
        const jsonLdSources = [partner.name, row.content_hash, entry.videoRef === null ? null : videoHashes.get(entry.videoRef) ?? null];
        return pdpEntryDraft(productId, i, entry, jsonLdSources, () => generateJsonLd(entry, product, partner.name));
      });
      sources.push({ partner, product, productId, row, videos, entries });
    }
  }
  const videoRows = sources.flatMap((s) => s.videos);
  const entryDrafts = sources.flatMap((s) => s.entries);

  // Videos move to their product before obsolete products go, so a video that changed product keeps its id.
  const storedVideos = () => trx.selectFrom('videos').select(['id', 'partner_id', 'ref', 'content_hash']).where('partner_id', 'in', partnerIds).execute();
  const videosBefore = byIdentity(await storedVideos(), videoKey);
  const videos = plan(videoRows, videoKey, videosBefore);
  await upsertRows(trx, 'videos', videos.write, [
    'product_id', 'position', 'published', 'name', 'description', 'aspect_ratio', 'length', 'language', 'family_friendly',
    'genre', 'keywords', 'creator_name', 'creator_job_title', 'transcript', 'thumbnail_url', 'upload_date', 'content_hash',
  ]);

  const storedEntries = () => trx
    .selectFrom('pdp_entries')
    .innerJoin('products', 'products.id', 'pdp_entries.product_id')
    .select(['pdp_entries.id', 'pdp_entries.product_id', 'pdp_entries.pdp_url_hash', 'pdp_entries.content_hash', 'pdp_entries.json_ld_hash'])
    .where('products.partner_id', 'in', partnerIds)
    .execute();
  const entriesByIdentity = byIdentity(await storedEntries(), entryKey);
  const entries = plan(entryDrafts, entryKey, entriesByIdentity);
  const entryRows = entries.write.map((draft) => draft.complete());
  await upsertRows(trx, 'pdp_entries', entryRows, [
    'position', 'pdp_url', 'retailer', 'video_ref', 'video_file_url', 'json_ld', 'json_ld_hash', 'content_hash',
  ]);
  const regenerated = entryRows.filter((row) => row.json_ld_hash !== null && row.json_ld_hash !== entriesByIdentity.get(entryKey(row))?.json_ld_hash);

  // Rows created above have IDs only the database knows; read them back only when there are some.
  const videoIds = videos.counts.created === 0 ? videosBefore : byIdentity(await storedVideos(), videoKey);
  const entryIds = entries.counts.created === 0 ? entriesByIdentity : byIdentity(await storedEntries(), entryKey);
  await writeLookups(trx, sources, storedProducts, (video) => videoIds.get(videoKey(video))?.id, (entry) => entryIds.get(entryKey(entry))?.id);

  await deleteByIds(trx, 'pdp_entries', entries.obsoleteIds);
  await deleteByIds(trx, 'videos', videos.obsoleteIds);
  await deleteByIds(trx, 'products', products.obsoleteIds);

  report.products = products.counts;
  report.videos = videos.counts;
  report.pdp_entries = { ...entries.counts, regenerated: regenerated.length };
  return report;
}

/**
 * Writes the lookup answer of every product whose answer's sources changed: the same document the
 * in-memory catalog serves, so a lookup reads one row.
 */
async function writeLookups(
  trx: Transaction<Database>,
  sources: readonly ProductSources[],
  stored: ReadonlyMap<string, { lookup_hash: string | null }>,
  videoId: (video: VideoRow) => number | undefined,
  entryId: (entry: PdpEntryDraft) => number | undefined,
): Promise<void> {
  const idOf = <T>(row: T, find: (row: T) => number | undefined, what: string): number => {
    const id = find(row);
    if (id === undefined) throw new Error(`a ${what} was not stored`);
    return id;
  };
  const changed = sources.flatMap((source) => {
    const videos = source.videos.map((video) => [idOf(video, videoId, 'video'), video.content_hash] as const);
    const entries = source.entries.map((entry) => [idOf(entry, entryId, 'PDP entry'), entry.content_hash] as const);
    const hash = lookupSourceHash(source.productId, source.row.content_hash, videos, entries);
    if (stored.get(productKey(source.row))?.lookup_hash === hash) return [];
    return [{ source, hash, ids: { product: source.productId, videos: videos.map(([id]) => id), pdpUrls: entries.map(([id]) => id) } }];
  });
  for (let start = 0; start < changed.length; start += LOOKUP_CHUNK) {
    const rows = changed.slice(start, start + LOOKUP_CHUNK).map(({ source, hash, ids }) => ({
      product_id: source.productId,
      lookup_hash: hash,
      lookup: JSON.stringify(toLookupResult(source.product, ids, source.partner.name)),
    }));
    await upsertRows(trx, 'product_lookups', rows, ['lookup_hash', 'lookup']);
  }
}

async function importPartners(trx: Transaction<Database>, partners: readonly Partner[]): Promise<ImportReport['partners']> {
  const stored = new Map(
    (await trx.selectFrom('partners').select(['id', 'name']).where('id', 'in', partners.map((p) => p.id)).execute())
      .map((row) => [row.id, row.name]),
  );
  const counts = { created: 0, updated: 0, unchanged: 0 };
  const write = partners.filter((partner) => {
    const name = stored.get(partner.id);
    if (name === undefined) counts.created += 1;
    else if (name === partner.name) counts.unchanged += 1;
    else counts.updated += 1;
    return name !== partner.name;
  });
  await upsertRows(trx, 'partners', write.map((p) => ({ id: p.id, name: p.name })), ['name']);
  return counts;
}

async function importApiKeys(trx: Transaction<Database>, partners: readonly Partner[], partnerIds: readonly string[], now: Date): Promise<ImportReport['api_keys']> {
  const listed = partners.flatMap((partner) => partner.apiKeys.map((key) => ({ ...key, partnerId: partner.id })));
  const listedIds = new Set(listed.map((key) => key.id));
  const stored = await trx
    .selectFrom('api_keys')
    .select(['id', 'partner_id', 'sha256', 'origin', 'revoked_at'])
    .where((eb) => eb.or([
      eb.and([eb('partner_id', 'in', partnerIds), eb('origin', '=', 'catalog')]),
      ...(listed.length === 0 ? [] : [eb('id', 'in', [...listedIds])]),
    ]))
    .execute();
  const storedById = byIdentity(stored, (row) => row.id);
  const counts = { created: 0, updated: 0, unchanged: 0, revoked: 0 };
  const write = listed.filter((key) => {
    const row = storedById.get(key.id);
    if (row === undefined) {
      counts.created += 1;
      return true;
    }
    const same = row.partner_id === key.partnerId && row.sha256 === key.sha256 && row.origin === 'catalog'
      && (row.revoked_at !== null || !key.revoked);
    if (same) counts.unchanged += 1;
    else counts.updated += 1;
    return !same;
  });
  await upsertRows(trx, 'api_keys', write.map((key) => ({
    id: key.id,
    partner_id: key.partnerId,
    sha256: key.sha256,
    origin: 'catalog' as const,
    created_at: now,
    revoked_at: key.revoked ? now : null,
  })), ['partner_id', 'sha256', 'origin']);
  // A revocation is never undone by a file: keep the stored time, or take the file's.
  const revokedInFile = write.filter((key) => key.revoked && storedById.get(key.id)?.revoked_at === null).map((key) => key.id);
  const dropped = stored.filter((row) => row.origin === 'catalog' && row.revoked_at === null && !listedIds.has(row.id)).map((row) => row.id);
  counts.revoked = dropped.length;
  const toRevoke = [...revokedInFile, ...dropped];
  if (toRevoke.length > 0) {
    await trx.updateTable('api_keys').set({ revoked_at: now }).where('id', 'in', toRevoke).where('revoked_at', 'is', null).execute();
  }
  return counts;
}
