import type { ApiKeyRecord, Product } from '../../domain/catalog.js';
import { sandboxCatalogOf } from '../../domain/sandbox.js';
import { CatalogSourceError, CatalogSourceReader, type CatalogPiece, type CatalogPieces, type CatalogUnit, type ListedIdentities, type PartnerHeader } from '../../domain/catalog-source.js';
import { TOMBSTONE_RETENTION_MS } from '../../domain/changes.js';
import { ChangeTally } from '../../domain/webhook-messages.js';
import { lookupHash, pdpEntryHash, pdpUrlHash, productHash, sha256Hex, videoHash } from '../../domain/content-hashes.js';
import { generateJsonLd } from '../../domain/json-ld.js';
import { etagOf, lookupBodyOfText } from '../../domain/lookup-body.js';
import { toLookupResult } from '../../domain/lookup-result.js';
import type { KeyChanges } from '../instances/change-versions.js';
import type { CursorKeys } from '../changes/cursor-keys.js';
import { CatalogChangedMessages } from '../webhooks/catalog-changed-messages.js';
import type { Clock } from '../common/clock.js';
import type { CatalogImportSession, CatalogStore, StoredApiKey } from './catalog-store.js';
import type { ImportCounts, ImportProgress, ImportReport } from './operator-commands.js';

/**
 * Products handled per round of reads and writes: bounds memory, and keeps statements short. Two
 * batches are held at once (one written, the next read); at 1,000 a million-product import peaked at
 * 480 MiB, at 500 at 390 MiB in about the same time (docs/performance.md).
 */
const BATCH = 500;
/** Stored products or videos read per page when looking for those a file no longer lists. */
const SWEEP_PAGE = 5_000;

/**
 * Imports a `partner-catalog/v1` catalog into a store, as one unit: it lands whole or not at all.
 *
 * The rules (docs/decisions.md, catalog files):
 * - For every partner in the file, the file is the whole truth: its products, videos and PDP
 *   entries the file no longer lists are deleted; its file-listed keys the file no longer lists
 *   are revoked. Partners absent from the file, and keys issued by an operator, are left alone.
 * - A key revoked once stays revoked: a re-import never brings it back.
 * - Rows keep their IDs by identity: a product by partner and SKU, a video by partner and ref,
 *   a PDP entry by product and page.
 * - Only what changed is written, and JSON-LD is generated only for entries one of whose
 *   sources changed.
 *
 * - A partner whose catalog the import changed gets one `catalog.changed` webhook message, to each
 *   of its enabled endpoints, queued in the same unit of work (`CatalogChangedMessages`).
 * - Each partner's sandbox, the catalog its test keys read, is imported by the same rules once
 *   every live catalog is (so a sandbox never moves a live product's ID in memory storage, where
 *   IDs follow the file's order): the file's `sandbox` section, or else the bundled demo products.
 *   A sandbox's changes reach its feed, never a webhook.
 *
 * The catalog is read piece by piece and written in batches as it is read, so memory holds one
 * batch and the identities seen, whatever the file's size. A file with any problem is refused
 * with every problem listed by JSON path, and nothing it held is kept.
 */
export class ImportCatalog {
  constructor(
    private readonly store: CatalogStore,
    private readonly clock: Clock,
    private readonly cursorKeys: CursorKeys,
    /** The bundled demo products: the sandbox of a partner whose file section gives none. */
    private readonly demoProducts: () => Promise<readonly Product[]>,
  ) {}

  /** Imports the file; once it has committed, `keysChanged` is told what it did to the keys, for the instances to be told. */
  async execute(pieces: CatalogPieces, keysChanged?: (changes: KeyChanges) => void, progress?: ImportProgress): Promise<ImportReport> {
    let keyChanges: KeyChanges | undefined;
    // Read before the unit of work starts, so the import holds no second connection for it.
    const messages = new CatalogChangedMessages(await this.cursorKeys.cursorKey());
    const demoProducts = await this.demoProducts();
    const report = await this.store.importing(async (session) => {
      const reader = new CatalogSourceReader();
      const run = new ImportRun(session, new Date(this.clock.now()), messages, demoProducts, progress);
      keyChanges = run.keyChanges;
      const take = async (piece: CatalogPiece): Promise<void> => {
        const units = reader.read(piece);
        // Once the file is refused nothing more is written: the rest is only checked, to list every problem.
        if (reader.problems.length > 0) run.stop();
        else for (const unit of units) await run.take(unit);
      };
      try {
        if (Symbol.asyncIterator in pieces) {
          for await (const group of pieces) for (const piece of group) await take(piece);
        } else {
          for (const piece of pieces) await take(piece);
        }
      } catch (error) {
        // The unit of work ends here: no statement of the batch being written may come after its rollback.
        await run.settled().catch(() => undefined);
        throw error;
      }
      progress?.startStage('finishing');
      await run.settled();
      const problems = reader.finish();
      if (problems.length > 0) throw new CatalogSourceError(problems);
      return run.finish();
    });
    if (keyChanges !== undefined) keysChanged?.(keyChanges);
    return report;
  }
}

const emptyCounts = (): ImportCounts => ({ created: 0, updated: 0, unchanged: 0, deleted: 0 });

/** Where one catalog's rows are counted: a partner's own, or its sandbox's. */
interface RowCounts {
  readonly products: ImportCounts;
  readonly videos: ImportCounts;
  readonly pdp_entries: ImportCounts & { regenerated: number };
}

/** Counts one row against what was stored under its identity; true if it must be written. */
function changed(counts: ImportCounts, stored: { readonly contentHash: string } | undefined, hash: string): boolean {
  if (stored === undefined) counts.created += 1;
  else if (stored.contentHash === hash) counts.unchanged += 1;
  else counts.updated += 1;
  return stored?.contentHash !== hash;
}

const byKey = <T, K>(rows: readonly T[], key: (row: T) => K): Map<K, T> => new Map(rows.map((row) => [key(row), row]));
const entryKey = (productId: number, urlHash: string): string => `${String(productId)}/${urlHash}`;

/** The catalog being imported: a partner's, or its sandbox (under the sandbox's catalog id). */
interface CurrentPartner {
  readonly header: PartnerHeader;
  readonly counts: RowCounts;
  readonly batch: Product[];
  /** The partner's feed position before this import listed any of its changes. */
  readonly positionBefore: number;
  /** Its changes as the feed lists them, for its webhook message. */
  readonly changes: ChangeTally;
}

class ImportRun {
  private readonly report: ImportReport = {
    partners: { created: 0, updated: 0, unchanged: 0 },
    api_keys: { created: 0, updated: 0, unchanged: 0, revoked: 0 },
    products: emptyCounts(),
    videos: emptyCounts(),
    pdp_entries: { ...emptyCounts(), regenerated: 0 },
    sandbox_products: emptyCounts(),
    sandbox_videos: emptyCounts(),
    sandbox_pdp_entries: { ...emptyCounts(), regenerated: 0 },
  };
  private readonly liveCounts: RowCounts = this.report;
  private readonly sandboxCounts: RowCounts = {
    products: this.report.sandbox_products, videos: this.report.sandbox_videos, pdp_entries: this.report.sandbox_pdp_entries,
  };
  /** What the import did to the keys, as the instances are told it. */
  readonly keyChanges = { withdrawn: [] as string[], added: [] as string[] };
  private partner: CurrentPartner | null = null;
  private readonly keys: { readonly partnerId: string; readonly keys: readonly ApiKeyRecord[] }[] = [];
  /** Each partner's sandbox, imported once every live catalog is. */
  private readonly sandboxes: { readonly owner: PartnerHeader; readonly products: readonly Product[] }[] = [];
  private stopped = false;
  private written = 0;
  /**
   * The batch being written while the next one is read: reading and checking a batch (CPU) overlaps
   * with writing the one before (mostly waiting for the database). At most one is written at a time.
   */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly session: CatalogImportSession,
    private readonly now: Date,
    private readonly messages: CatalogChangedMessages,
    private readonly demoProducts: readonly Product[],
    private readonly progress: ImportProgress | undefined,
  ) {}

  /** The file is refused: drop what waits to be written. */
  stop(): void {
    this.stopped = true;
    this.partner = null;
  }

  /** Once the batch being written is written, or has failed. */
  settled(): Promise<void> {
    return this.writing;
  }

  async take(unit: CatalogUnit): Promise<void> {
    if (this.stopped) return;
    switch (unit.kind) {
      case 'partner':
        await this.startPartner(unit.partner);
        return;
      case 'product': {
        const partner = this.current();
        this.progress?.product();
        partner.batch.push(unit.product);
        if (partner.batch.length >= BATCH) {
          await this.writing;
          this.writing = this.writeBatch(partner);
          // Its failure is met when it is awaited, at the next batch or the partner's end.
          this.writing.catch(() => undefined);
        }
        return;
      }
      case 'partnerEnd': {
        const partner = this.current();
        await this.writing;
        await this.endCatalog(partner, unit.listed);
        await this.messages.queue(this.session, { partnerId: unit.partner.id, positionBefore: partner.positionBefore, changes: partner.changes, at: this.now });
        this.keys.push({ partnerId: unit.partner.id, keys: unit.partner.apiKeys });
        this.partner = null;
        this.sandboxes.push({ owner: unit.partner, products: unit.sandbox ?? this.demoProducts });
        return;
      }
    }
  }

  async finish(): Promise<ImportReport> {
    for (const { owner, products } of this.sandboxes) await this.importSandbox(owner, products);
    await this.importKeys();
    return this.report;
  }

  /** Writes what waits, then deletes what the file no longer lists and the feed's expired tombstones. */
  private async endCatalog(partner: CurrentPartner, listed: ListedIdentities): Promise<void> {
    await this.writeBatch(partner);
    await this.sweep(partner, listed);
    await this.session.dropTombstones(partner.header.id, new Date(this.now.getTime() - TOMBSTONE_RETENTION_MS));
  }

  /** The partner's sandbox, whole: a sandbox is small, so it is written in batches only for the bound on a statement. */
  private async importSandbox(owner: PartnerHeader, products: readonly Product[]): Promise<void> {
    const header = { id: sandboxCatalogOf(owner.id), name: owner.name };
    // Its partner row carries the name its answers' JSON-LD gives as publisher, and its feed's position.
    if ((await this.session.partnerName(header.id)) !== header.name) await this.session.savePartner(header.id, header.name);
    // No webhook message is queued for a sandbox: its feed position before and its tally go unread.
    const sandbox: CurrentPartner = { header, counts: this.sandboxCounts, batch: [], positionBefore: 0, changes: new ChangeTally() };
    for (let start = 0; start < products.length; start += BATCH) {
      sandbox.batch.push(...products.slice(start, start + BATCH));
      await this.writeBatch(sandbox);
    }
    await this.endCatalog(sandbox, {
      skus: new Set(products.map((product) => product.sku)),
      videoRefs: new Set(products.flatMap((product) => product.videos.map((video) => video.ref))),
    });
  }

  private current(): CurrentPartner {
    if (this.partner === null) throw new Error('a product came before its partner');
    return this.partner;
  }

  private async startPartner(header: PartnerHeader): Promise<void> {
    const stored = await this.session.partnerName(header.id);
    const counts = this.report.partners;
    if (stored === null) counts.created += 1;
    else if (stored === header.name) counts.unchanged += 1;
    else counts.updated += 1;
    if (stored !== header.name) await this.session.savePartner(header.id, header.name);
    this.partner = { header, counts: this.liveCounts, batch: [], positionBefore: await this.session.feedPosition(header.id), changes: new ChangeTally() };
  }

  /** Writes a batch of one partner's products: rows, then entries' JSON-LD, then answers, each only where changed. */
  private async writeBatch(partner: CurrentPartner): Promise<void> {
    const products = partner.batch.splice(0);
    if (products.length === 0) return;
    const { session } = this;
    const report = partner.counts;
    const { id: partnerId, name: partnerName } = partner.header;

    const hashes = products.map((product) => productHash(partnerId, product));
    const storedProducts = byKey(await session.products(partnerId, products.map((p) => p.sku)), (row) => row.sku);
    const productRows = products.map((product, i) => ({ sku: product.sku, contentHash: hashes[i]! }));
    await session.saveProducts(partnerId, productRows.filter((row) => changed(report.products, storedProducts.get(row.sku), row.contentHash)));
    const created = products.filter((p) => !storedProducts.has(p.sku)).map((p) => p.sku);
    const productIds = new Map([...storedProducts.values(), ...await session.products(partnerId, created)].map((row) => [row.sku, row.id]));
    const idOf = (sku: string): number => {
      const id = productIds.get(sku);
      if (id === undefined) throw new Error(`product ${partnerId}/${sku} was not stored`);
      return id;
    };
    const ids = products.map((product) => idOf(product.sku));

    // Videos move to their product here, before products the file dropped go, so a moved video keeps its ID.
    const videoRows = products.flatMap((product, i) =>
      product.videos.map((video, position) => ({ ref: video.ref, productId: ids[i]!, contentHash: videoHash(partnerId, ids[i]!, position, video) })));
    const storedVideos = byKey(await session.videos(partnerId, videoRows.map((v) => v.ref)), (row) => row.ref);
    await session.saveVideos(partnerId, videoRows.filter((row) => changed(report.videos, storedVideos.get(row.ref), row.contentHash)));
    const newRefs = videoRows.filter((row) => !storedVideos.has(row.ref)).map((row) => row.ref);
    const videoIds = new Map([...storedVideos.values(), ...await session.videos(partnerId, newRefs)].map((row) => [row.ref, row.id]));
    const videoHashes = new Map(videoRows.map((row) => [row.ref, row.contentHash]));

    const entriesOf = products.map((product, i) => product.pdpUrls.map((entry, position) => {
      const videoContent = entry.videoRef === null ? null : videoHashes.get(entry.videoRef) ?? null;
      return { product, entry, productId: ids[i]!, urlHash: pdpUrlHash(entry), contentHash: pdpEntryHash(ids[i]!, position, entry, partnerName, hashes[i]!, videoContent) };
    }));
    const entries = entriesOf.flat();
    const storedEntries = await session.pdpEntries(ids);
    const storedByKey = byKey(storedEntries, (row) => entryKey(row.productId, row.urlHash));
    const entryRows = entries.filter((e) => changed(report.pdp_entries, storedByKey.get(entryKey(e.productId, e.urlHash)), e.contentHash)).map((e) => {
      const jsonLd = generateJsonLd(e.entry, e.product, partnerName);
      const jsonLdHash = jsonLd === null ? null : sha256Hex(JSON.stringify(jsonLd));
      if (jsonLdHash !== null && jsonLdHash !== storedByKey.get(entryKey(e.productId, e.urlHash))?.jsonLdHash) report.pdp_entries.regenerated += 1;
      return { productId: e.productId, urlHash: e.urlHash, contentHash: e.contentHash, jsonLdHash };
    });
    await session.savePdpEntries(entryRows);
    const listed = new Set(entries.map((e) => entryKey(e.productId, e.urlHash)));
    const obsolete = storedEntries.filter((row) => !listed.has(entryKey(row.productId, row.urlHash))).map((row) => row.id);
    await session.deletePdpEntries(obsolete);
    report.pdp_entries.deleted += obsolete.length;
    const entryIds = entries.some((e) => !storedByKey.has(entryKey(e.productId, e.urlHash)))
      ? byKey(await session.pdpEntries(ids), (row) => entryKey(row.productId, row.urlHash))
      : storedByKey;

    // A product's answer is rewritten when anything it is built from changed, IDs included.
    const lookups = products.flatMap((product, i) => {
      const productId = ids[i]!;
      const videos = product.videos.map((video) => {
        const id = videoIds.get(video.ref);
        if (id === undefined) throw new Error(`video ${partnerId}/${video.ref} was not stored`);
        return [id, videoHashes.get(video.ref)!] as const;
      });
      const pdpUrls = entriesOf[i]!.map((e) => {
        const row = entryIds.get(entryKey(productId, e.urlHash));
        if (row === undefined) throw new Error(`a PDP entry of ${partnerId}/${product.sku} was not stored`);
        return [row.id, e.contentHash] as const;
      });
      const hash = lookupHash(productId, hashes[i]!, videos, pdpUrls);
      if (storedProducts.get(product.sku)?.lookupHash === hash) return [];
      const answerIds = { product: productId, videos: videos.map(([id]) => id), pdpUrls: pdpUrls.map(([id]) => id) };
      const lookup = toLookupResult(product, answerIds, partnerName);
      // Written as text once: the store keeps this text, and the ETag is of the body around it.
      const lookupText = JSON.stringify(lookup);
      const etag = etagOf(lookupBodyOfText(lookupText));
      // The feed lists a product again only when what a lookup answers changed, as its ETag tells.
      return [{ productId, sku: product.sku, lookupHash: hash, lookup, lookupText, etag, changed: etag !== storedProducts.get(product.sku)?.etag }];
    });
    await session.saveLookups(partnerId, lookups, this.now);
    for (const row of lookups) {
      if (row.changed) partner.changes.add({ sku: row.sku, productId: row.productId, change: 'upserted', etag: row.etag, changedAt: this.now });
    }
    if (partner.counts === this.liveCounts) {
      this.written += products.length;
      this.progress?.productsWritten(this.written);
    }
  }

  /**
   * Deletes the partner's stored videos, then products, that the file no longer lists: the reader's
   * own record of the SKUs and refs it met, so nothing more is held per row.
   */
  private async sweep(partner: CurrentPartner, listed: ListedIdentities): Promise<void> {
    const { session } = this;
    const report = partner.counts;
    const partnerId = partner.header.id;
    for (let after: string | null = null; ;) {
      const page = await session.videoPage(partnerId, after, SWEEP_PAGE);
      const gone = page.filter((row) => !listed.videoRefs.has(row.ref)).map((row) => row.id);
      await session.deleteVideos(gone);
      report.videos.deleted += gone.length;
      if (page.length < SWEEP_PAGE) break;
      after = page[page.length - 1]!.ref;
    }
    for (let after: string | null = null; ;) {
      const page = await session.productPage(partnerId, after, SWEEP_PAGE);
      const gone = page.filter((row) => !listed.skus.has(row.sku));
      report.pdp_entries.deleted += await session.deleteProducts(gone.map((row) => row.id));
      report.products.deleted += gone.length;
      await session.recordDeletions(partnerId, gone.map((row) => ({ sku: row.sku, productId: row.id })), this.now);
      for (const row of gone) partner.changes.add({ sku: row.sku, productId: row.id, change: 'deleted', etag: null, changedAt: this.now });
      if (page.length < SWEEP_PAGE) break;
      after = page[page.length - 1]!.sku;
    }
  }

  /** Keys last, once every partner is read: a key may move from one partner of the file to another. */
  private async importKeys(): Promise<void> {
    if (this.keys.length === 0) return;
    const listed = this.keys.flatMap(({ partnerId, keys }) => keys.map((key) => ({ ...key, partnerId })));
    const listedIds = new Set(listed.map((key) => key.id));
    const stored = await this.session.apiKeys(this.keys.map((k) => k.partnerId), [...listedIds]);
    const storedById = byKey(stored, (row) => row.id);
    const counts = this.report.api_keys;
    const same = (row: StoredApiKey, key: (typeof listed)[number]): boolean =>
      row.partnerId === key.partnerId && row.mode === key.mode && row.sha256 === key.sha256 && row.origin === 'catalog' && (row.revoked || !key.revoked);
    const write = listed.filter((key) => {
      const row = storedById.get(key.id);
      if (row === undefined) counts.created += 1;
      else if (same(row, key)) counts.unchanged += 1;
      else counts.updated += 1;
      return row === undefined || !same(row, key);
    });
    await this.session.saveApiKeys(write.map(({ id, partnerId, mode, sha256, revoked }) => ({ id, partnerId, mode, sha256, revoked })), this.now);
    const revokedInFile = write.filter((key) => key.revoked && storedById.get(key.id)?.revoked === false).map((key) => key.id);
    const dropped = stored.filter((row) => row.origin === 'catalog' && !row.revoked && !listedIds.has(row.id)).map((row) => row.id);
    counts.revoked = dropped.length;
    await this.session.revokeApiKeys([...revokedInFile, ...dropped], this.now);
    for (const key of write) {
      const row = storedById.get(key.id);
      // A revoked key stays revoked, whatever the file says.
      const live = !key.revoked && row?.revoked !== true;
      const moved = row !== undefined && (row.sha256 !== key.sha256 || row.partnerId !== key.partnerId || row.mode !== key.mode);
      if (row !== undefined && !row.revoked && (!live || moved)) this.keyChanges.withdrawn.push(key.id);
      if (live && (row === undefined || moved)) this.keyChanges.added.push(key.id);
    }
    this.keyChanges.withdrawn.push(...dropped);
  }
}
