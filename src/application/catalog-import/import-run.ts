// Over 450 lines: one import's run keeps the state each of its steps reads and writes (held and streamed partners, sandboxes, keys, source hashes, the batch in flight); parted, each part would reach into the others.
import type { ApiKeyRecord, Product } from '../../domain/catalog.js';
import { sandboxCatalogOf } from '../../domain/sandbox.js';
import { type CatalogUnit, type ListedIdentities, type PartnerHeader } from '../../domain/catalog-source.js';
import { TOMBSTONE_RETENTION_MS } from '../../domain/changes.js';
import { ChangeTally } from '../../domain/webhook-messages.js';
import { catalogSourceHash, lookupHash, pdpEntryHash, pdpUrlHash, productHash, ProductsHash, sha256Hex, videoHash } from '../../domain/content-hashes.js';
import { generateJsonLd } from '../../domain/json-ld.js';
import { etagOf, lookupBodyOfText } from '../../domain/lookup-body.js';
import { toLookupResult } from '../../domain/lookup-result.js';
import { CatalogChangedMessages } from '../webhooks/catalog-changed-messages.js';
import type { CatalogImportSession, StoredApiKey, StoredCatalog } from './catalog-store.js';
import type { ImportChanges, ImportCounts, ImportProgress, ImportReport } from './operator-commands.js';

/**
 * Products handled per round of reads and writes: bounds memory, and keeps statements short. Two
 * batches are held at once (one written, the next read); at 1,000 a million-product import peaked at
 * 480 MiB, at 500 at 390 MiB in about the same time (docs/performance-history.md).
 */
const BATCH = 500;
/** Stored products or videos read per page when looking for those a file no longer lists. */
const SWEEP_PAGE = 5_000;
/**
 * Partners that fit a batch are held whole, products and all, until the stored catalogs of this many
 * are read in one go: a file of many small partners then costs a read per this many partners, not
 * several statements per partner (at 10,000 partners of 3 products, 5 reads).
 */
const HELD_PARTNERS = 2_000;
/** And at most about this many bytes of their products' JSON, so memory stays bounded whatever the products' size. */
const HELD_BYTES = 8 * 1024 * 1024;


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

function productsHashOf(products: readonly Product[]): string {
  const hash = new ProductsHash();
  for (const product of products) hash.add(product);
  return hash.digest();
}

/** Counts a catalog's rows as a row-by-row look would find them all: unchanged. */
function countUnchanged(counts: RowCounts, products: readonly Product[]): void {
  counts.products.unchanged += products.length;
  for (const product of products) {
    counts.videos.unchanged += product.videos.length;
    counts.pdp_entries.unchanged += product.pdpUrls.length;
  }
}

/** The catalog being imported: a partner's, or its sandbox (under the sandbox's catalog id). */
interface CurrentPartner {
  readonly header: PartnerHeader;
  readonly counts: RowCounts;
  readonly batch: Product[];
  /** As stored before the import; undefined for a catalog new to the store. */
  readonly stored: StoredCatalog | undefined;
  /** The import wrote or deleted some row of it, or its name. */
  written: boolean;
  /** The partner's feed position before this import listed any of its changes. */
  readonly positionBefore: number;
  /** Its changes as the feed lists them, for its webhook message. */
  readonly changes: ChangeTally;
}

type PartnerEnd = Extract<CatalogUnit, { kind: 'partnerEnd' }>;

/** A partner of the file held whole while it fits a batch, until its stored catalog is read. */
class HeldPartner {
  readonly products: Product[] = [];
  readonly hash = new ProductsHash();
  bytes = 0;

  constructor(readonly header: PartnerHeader) {}

  add(product: Product): void {
    this.bytes += this.hash.add(product);
    this.products.push(product);
  }
}

/** One import's reading, holding and writing: `ImportCatalog` runs one inside the store's unit of work. */
export class ImportRun {
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
  private readonly keyChanges = { withdrawn: [] as string[], added: [] as string[] };
  /** The partners whose keys those changes are of. */
  private readonly keyPartners = new Set<string>();
  /** The partner being read while it fits a batch. */
  private open: HeldPartner | null = null;
  /** Partners read whole, waiting for their stored catalogs to be read together. */
  private readonly held: { readonly partner: HeldPartner; readonly end: PartnerEnd }[] = [];
  private heldBytes = 0;
  /** The partner larger than a batch being written as it is read, and the hash of its products so far. */
  private streaming: { readonly partner: CurrentPartner; readonly hash: ProductsHash } | null = null;
  /** Sandboxes' stored catalogs, read with their partners'. */
  private readonly storedSandboxes = new Map<string, StoredCatalog>();
  private readonly keys: { readonly partnerId: string; readonly keys: readonly ApiKeyRecord[] }[] = [];
  /** Each partner's sandbox, imported once every live catalog is: its section, or null for the bundled demo products. */
  private readonly sandboxes: { readonly owner: PartnerHeader; readonly section: readonly Product[] | null }[] = [];
  private demoHash: string | undefined;
  /** Source hashes to record, of the catalogs whose stored one differs. */
  private readonly sourceHashes: { readonly catalogId: string; readonly sourceHash: string }[] = [];
  /** The catalogs the instances are to be told of. */
  private readonly changedCatalogs: string[] = [];
  /** A partner of the file whose source was not known: its keys may never have been told either. */
  private sourceUnknown = false;
  private readonly tombstonesBefore: Date;
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
  ) {
    this.tombstonesBefore = new Date(now.getTime() - TOMBSTONE_RETENTION_MS);
  }

  /** The file is refused: drop what waits to be written. */
  stop(): void {
    this.stopped = true;
    this.open = null;
    this.held.length = 0;
    this.streaming = null;
  }

  /** What the import changed, for the instances once it has committed. */
  changes(): ImportChanges {
    const { withdrawn, added } = this.keyChanges;
    const keysChanged = withdrawn.length > 0 || added.length > 0 || this.sourceUnknown;
    return { catalogs: this.changedCatalogs, keys: keysChanged ? this.keyChanges : null };
  }

  /** What an announcement that failed leaves not known to match its source: the catalogs it was to tell of, and the partners whose keys changed. */
  unannounced(): string[] {
    return [...new Set([...this.changedCatalogs, ...this.keyPartners])];
  }

  /** Once the batch being written is written, or has failed. */
  settled(): Promise<void> {
    return this.writing;
  }

  async take(unit: CatalogUnit): Promise<void> {
    if (this.stopped) return;
    switch (unit.kind) {
      case 'partner':
        this.open = new HeldPartner(unit.partner);
        return;
      case 'product': {
        const open = this.open;
        if (open !== null && open.products.length < BATCH) {
          open.add(unit.product);
          return;
        }
        if (open !== null) await this.stream(open);
        const { partner, hash } = this.current();
        hash.add(unit.product);
        partner.batch.push(unit.product);
        if (partner.batch.length >= BATCH) await this.writeInTurn(partner);
        return;
      }
      case 'partnerEnd': {
        const open = this.open;
        if (open !== null) {
          this.open = null;
          this.held.push({ partner: open, end: unit });
          this.heldBytes += open.bytes;
          if (this.held.length >= HELD_PARTNERS || this.heldBytes >= HELD_BYTES) await this.importHeld();
          return;
        }
        const { partner, hash } = this.current();
        this.streaming = null;
        await this.writing;
        await this.endPartner(partner, unit, catalogSourceHash(partner.header.id, partner.header.name, hash.digest()));
        return;
      }
    }
  }

  async finish(): Promise<ImportReport> {
    await this.importHeld();
    for (const { owner, section } of this.sandboxes) await this.importSandbox(owner, section);
    await this.session.saveSourceHashes(this.sourceHashes);
    await this.importKeys();
    return this.report;
  }

  private current(): { readonly partner: CurrentPartner; readonly hash: ProductsHash } {
    if (this.streaming === null) throw new Error('a product came before its partner');
    return this.streaming;
  }

  /** Writes the next batch once the one before it is written: reading goes on meanwhile. */
  private async writeInTurn(partner: CurrentPartner): Promise<void> {
    await this.writing;
    this.writing = this.writeBatch(partner);
    // Its failure is met when it is awaited, at the next batch or the partner's end.
    this.writing.catch(() => undefined);
  }

  /** A partner grown past a batch: after the partners held before it, written as it is read, row by row. */
  private async stream(open: HeldPartner): Promise<void> {
    this.open = null;
    const partner = await this.startPartner(open.header, await this.importHeld(open.header));
    partner.batch.push(...open.products);
    this.streaming = { partner, hash: open.hash };
    await this.writeInTurn(partner);
  }

  /**
   * Reads the stored catalogs of the partners held, and of their sandboxes, in one go (with `next`'s,
   * the partner about to be streamed, returned), then imports each held partner in file order.
   */
  private async importHeld(next?: PartnerHeader): Promise<StoredCatalog | undefined> {
    const held = this.held.splice(0);
    this.heldBytes = 0;
    const ids = [...held.map(({ partner }) => partner.header.id), ...(next === undefined ? [] : [next.id])];
    if (ids.length === 0) return undefined;
    const stored = byKey(await this.session.catalogs(ids.flatMap((id) => [id, sandboxCatalogOf(id)]), this.tombstonesBefore), (row) => row.id);
    for (const id of ids) {
      const sandbox = stored.get(sandboxCatalogOf(id));
      if (sandbox !== undefined) this.storedSandboxes.set(sandbox.id, sandbox);
    }
    for (const { partner, end } of held) await this.importWhole(partner, end, stored.get(partner.header.id));
    return next === undefined ? undefined : stored.get(next.id);
  }

  /** A partner held whole: untouched if its source is the one its rows were imported from, else written as one batch. */
  private async importWhole(held: HeldPartner, end: PartnerEnd, stored: StoredCatalog | undefined): Promise<void> {
    const { header, products } = held;
    const sourceHash = catalogSourceHash(header.id, header.name, held.hash.digest());
    if (stored?.sourceHash === sourceHash) {
      this.report.partners.unchanged += 1;
      await this.leaveAsIs(stored, this.liveCounts, products);
      this.written += products.length;
      this.progress?.productsWritten(this.written);
      this.partnerRead(end);
      return;
    }
    const partner = await this.startPartner(header, stored);
    partner.batch.push(...products);
    await this.endPartner(partner, end, sourceHash);
  }

  /** A catalog whose rows are already what its source makes: counted unchanged, and only its expired tombstones dropped. */
  private async leaveAsIs(stored: StoredCatalog, counts: RowCounts, products: readonly Product[]): Promise<void> {
    countUnchanged(counts, products);
    if (stored.expiredTombstones) await this.session.dropTombstones(stored.id, this.tombstonesBefore);
  }

  /** Ends a partner examined row by row: what waits is written, what the file no longer lists deleted, its webhook message queued. */
  private async endPartner(partner: CurrentPartner, end: PartnerEnd, sourceHash: string): Promise<void> {
    await this.endCatalog(partner, end.listed);
    await this.messages.queue(this.session, { partnerId: end.partner.id, positionBefore: partner.positionBefore, changes: partner.changes, at: this.now });
    this.settle(partner, sourceHash);
    this.partnerRead(end);
  }

  /** What every partner of the file leaves for the import's end: its keys and its sandbox. */
  private partnerRead(end: PartnerEnd): void {
    this.keys.push({ partnerId: end.partner.id, keys: end.partner.apiKeys });
    this.sandboxes.push({ owner: end.partner, section: end.sandbox });
  }

  /** Records a catalog examined row by row: its source hash where it changed, and whether the instances are to be told. */
  private settle(catalog: CurrentPartner, sourceHash: string): void {
    const known = catalog.stored?.sourceHash === sourceHash;
    if (!known) this.sourceHashes.push({ catalogId: catalog.header.id, sourceHash });
    if (!known || catalog.written) this.changedCatalogs.push(catalog.header.id);
  }

  /** Writes what waits, then deletes what the file no longer lists and the feed's expired tombstones. */
  private async endCatalog(partner: CurrentPartner, listed: ListedIdentities): Promise<void> {
    await this.writeBatch(partner);
    await this.sweep(partner, listed);
    if (partner.stored?.expiredTombstones === true) await this.session.dropTombstones(partner.header.id, this.tombstonesBefore);
  }

  /** The partner's sandbox, whole: a sandbox is small, so it is written in batches only for the bound on a statement. */
  private async importSandbox(owner: PartnerHeader, section: readonly Product[] | null): Promise<void> {
    const header = { id: sandboxCatalogOf(owner.id), name: owner.name };
    const products = section ?? this.demoProducts;
    // The demo products are hashed once, not once per partner that has them.
    const productsHash = section === null ? (this.demoHash ??= productsHashOf(this.demoProducts)) : productsHashOf(section);
    const sourceHash = catalogSourceHash(header.id, header.name, productsHash);
    const stored = this.storedSandboxes.get(header.id);
    if (stored?.sourceHash === sourceHash) {
      await this.leaveAsIs(stored, this.sandboxCounts, products);
      return;
    }
    // Its partner row carries the name its answers' JSON-LD gives as publisher, and its feed's position.
    const renamed = stored?.name !== header.name;
    if (renamed) await this.session.savePartner(header.id, header.name);
    // No webhook message is queued for a sandbox: its feed position before and its tally go unread.
    const sandbox: CurrentPartner = { header, counts: this.sandboxCounts, batch: [], stored, written: renamed, positionBefore: 0, changes: new ChangeTally() };
    for (let start = 0; start < products.length; start += BATCH) {
      sandbox.batch.push(...products.slice(start, start + BATCH));
      await this.writeBatch(sandbox);
    }
    await this.endCatalog(sandbox, {
      skus: new Set(products.map((product) => product.sku)),
      videoRefs: new Set(products.flatMap((product) => product.videos.map((video) => video.ref))),
    });
    this.settle(sandbox, sourceHash);
  }

  private async startPartner(header: PartnerHeader, stored: StoredCatalog | undefined): Promise<CurrentPartner> {
    const counts = this.report.partners;
    if (stored === undefined) counts.created += 1;
    else if (stored.name === header.name) counts.unchanged += 1;
    else counts.updated += 1;
    if (stored?.sourceHash === undefined || stored.sourceHash === null) this.sourceUnknown = true;
    const renamed = stored?.name !== header.name;
    if (renamed) await this.session.savePartner(header.id, header.name);
    return { header, counts: this.liveCounts, batch: [], stored, written: renamed, positionBefore: await this.session.feedPosition(header.id), changes: new ChangeTally() };
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
    const productWrites = productRows.filter((row) => changed(report.products, storedProducts.get(row.sku), row.contentHash));
    await session.saveProducts(partnerId, productWrites);
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
    const videoWrites = videoRows.filter((row) => changed(report.videos, storedVideos.get(row.ref), row.contentHash));
    await session.saveVideos(partnerId, videoWrites);
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
    if (productWrites.length + videoWrites.length + entryRows.length + obsolete.length + lookups.length > 0) partner.written = true;
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
      if (gone.length > 0) partner.written = true;
      await session.deleteVideos(gone);
      report.videos.deleted += gone.length;
      if (page.length < SWEEP_PAGE) break;
      after = page[page.length - 1]!.ref;
    }
    for (let after: string | null = null; ;) {
      const page = await session.productPage(partnerId, after, SWEEP_PAGE);
      const gone = page.filter((row) => !listed.skus.has(row.sku));
      if (gone.length > 0) partner.written = true;
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
    const dropped = stored.filter((row) => row.origin === 'catalog' && !row.revoked && !listedIds.has(row.id));
    counts.revoked = dropped.length;
    await this.session.revokeApiKeys([...revokedInFile, ...dropped.map((row) => row.id)], this.now);
    const changedKey = (list: string[], key: { readonly id: string; readonly partnerId: string }): void => {
      list.push(key.id);
      this.keyPartners.add(key.partnerId);
    };
    for (const key of write) {
      const row = storedById.get(key.id);
      // A revoked key stays revoked, whatever the file says.
      const live = !key.revoked && row?.revoked !== true;
      const moved = row !== undefined && (row.sha256 !== key.sha256 || row.partnerId !== key.partnerId || row.mode !== key.mode);
      if (row !== undefined && !row.revoked && (!live || moved)) changedKey(this.keyChanges.withdrawn, key);
      if (live && (row === undefined || moved)) changedKey(this.keyChanges.added, key);
    }
    for (const row of dropped) changedKey(this.keyChanges.withdrawn, row);
  }
}
