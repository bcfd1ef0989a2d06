import { expect } from 'chai';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import { ImportCatalog } from '../../src/application/catalog-import/import-catalog.js';
import type { ApiKeyStore } from '../../src/application/access/api-key-store.js';
import type { CatalogImportSession, CatalogStore } from '../../src/application/catalog-import/catalog-store.js';
import type { ImportChanges, ImportReport } from '../../src/application/catalog-import/operator-commands.js';
import type { KeyChanges } from '../../src/application/instances/change-versions.js';
import type { ChangesFeed } from '../../src/application/changes/changes-feed.js';
import { ReadChanges } from '../../src/application/changes/read-changes.js';
import { decodeCursor, type FeedEntry } from '../../src/domain/changes.js';
import { sandboxCatalogOf } from '../../src/domain/sandbox.js';
import { DomainError } from '../../src/domain/errors.js';
import { etagOf, lookupBody } from '../../src/domain/lookup-body.js';
import { systemClock } from '../../src/application/common/clock.js';
import type { ProductCatalog } from '../../src/application/lookup/product-catalog.js';
import { hashApiKey, principalOf } from '../../src/domain/api-key.js';
import { sha256Hex } from '../../src/domain/content-hashes.js';
import type { Product } from '../../src/domain/catalog.js';
import { CatalogSourceError, parseCatalogSource, piecesOfDocument } from '../../src/domain/catalog-source.js';
import { toLookupResult, type LookupResult } from '../../src/domain/lookup-result.js';
import type { Sku } from '../../src/domain/sku.js';
import { fixtureDocument, KEYS, searchableFixtureDocument } from '../fixtures/catalog-fixture.js';
import { importDocument } from '../support/import.js';
import { demoProducts } from '../../src/adapters/catalog-file/catalog-file.js';

/** A store with nothing imported yet, its IDs starting from 1, and its read sides. */
export interface ImportSubject {
  readonly store: CatalogStore;
  readonly catalog: ProductCatalog;
  readonly keys: ApiKeyStore;
  readonly feed: ChangesFeed;
  /** Adds a key as an operator issues one (not from a file). */
  issueKey(keyId: string, partnerId: string, sha256: string): Promise<void>;
  /** Revokes a key as an operator does. */
  revokeKey(keyId: string): Promise<void>;
}

type Doc = ReturnType<typeof fixtureDocument> & { partners: any[] };

const doc = (): Doc => fixtureDocument() as Doc;
const searchable = (): Doc => searchableFixtureDocument() as Doc;
const acmeProducts = (d: Doc): any[] => (d.partners[0] as { products: any[] }).products;
const tent = (d: Doc): any => acmeProducts(d).find((p: any) => p.sku === 'TENT-2P');

/** The products of a partner's sandbox: its file section's, or the bundled demo products when it has none. */
const sandboxProducts = (partner: { readonly sandbox: readonly Product[] | null }, demo: readonly Product[]): readonly Product[] => partner.sandbox ?? demo;

/**
 * Every partner's products in file order, then every partner's sandbox (under `~<partner>`) in the same
 * order, with the IDs a first import into an empty store gives them: sandboxes come once every live catalog is.
 */
async function answersInFileOrder(d: Doc): Promise<Map<string, LookupResult>> {
  const demo = await demoProducts();
  const partners = parseCatalogSource(d).partners;
  const catalogs = [
    ...partners.map((partner) => ({ id: partner.id, name: partner.name, products: partner.products })),
    ...partners.map((partner) => ({ id: sandboxCatalogOf(partner.id), name: partner.name, products: sandboxProducts(partner, demo) })),
  ];
  const next = { product: 1, video: 1, entry: 1 };
  const answers = new Map<string, LookupResult>();
  for (const catalog of catalogs) {
    for (const product of catalog.products) {
      const ids = { product: next.product++, videos: product.videos.map(() => next.video++), pdpUrls: product.pdpUrls.map(() => next.entry++) };
      answers.set(`${catalog.id}/${product.sku}`, toLookupResult(product, ids, catalog.name));
    }
  }
  return answers;
}

/**
 * `count` partners, `p-00` on, each with the fixture's first partner's products and a key of its own,
 * and no sandbox section: each gets the bundled demo products.
 */
export function manyPartnersDocument(count: number): Doc {
  const d = doc();
  const products = acmeProducts(d);
  d.partners = Array.from({ length: count }, (_, i) => {
    const id = `p-${String(i).padStart(2, '0')}`;
    return { id, name: `Partner ${i}`, api_keys: [{ id: `${id}-live`, sha256: sha256Hex(id) }], products: structuredClone(products) };
  });
  return d;
}

/**
 * The store, its every session call noted in `calls` as `method` and, when it names one first, the
 * catalog: `products p-07`. A call whose every list is empty is left out: it reads or writes nothing.
 */
function noting(store: CatalogStore, calls: string[]): CatalogStore {
  return {
    importing: (work) => store.importing((session) => work(new Proxy(session, {
      get: (target, name: keyof CatalogImportSession) => {
        const method = (target[name] as (...args: unknown[]) => unknown).bind(target);
        return (...args: unknown[]) => {
          const lists = args.filter(Array.isArray);
          if (lists.length === 0 || lists.some((list) => list.length > 0)) calls.push(typeof args[0] === 'string' ? `${name} ${args[0]}` : name);
          return method(...args);
        };
      },
    }))),
  };
}

/** The store, with no catalog's source hash known: every catalog is examined row by row, as imports were before they were kept. */
function examinedRowByRow(store: CatalogStore): CatalogStore {
  return {
    importing: (work) => store.importing((session) => work(new Proxy(session, {
      get: (target, name: keyof CatalogImportSession) => (name === 'catalogs'
        ? async (...args: Parameters<CatalogImportSession['catalogs']>) => (await target.catalogs(...args)).map((row) => ({ ...row, sourceHash: null }))
        : target[name].bind(target)),
    }))),
  };
}

/**
 * The rules of an import, on every storage: the same file gives the same IDs, answers and report.
 * `open` is called inside the suite to register hooks; `fresh()` runs inside each test.
 */
export function catalogImportContract(adapterName: string, open: () => { fresh(): Promise<ImportSubject> }): void {
  describe(`ImportCatalog contract: ${adapterName}`, function () {
    const setup = open();
    let s: ImportSubject;
    beforeEach(async function () {
      s = await setup.fresh();
    });

    const importDoc = (d: unknown) => importDocument(s.store, d);
    const lookup = async (partnerId: string, sku: string): Promise<LookupResult> => {
      const found = await s.catalog.findBySku(partnerId, sku as Sku);
      if (found === null) throw new Error(`${partnerId}/${sku} not found`);
      return found.result;
    };
    /** The answer to every product of the file and of its partners' sandboxes, in the order `answersInFileOrder` lists them. */
    const everyAnswer = async (d: Doc): Promise<Map<string, LookupResult | null>> => {
      const demo = await demoProducts();
      const answers = new Map<string, LookupResult | null>();
      const answer = async (catalogId: string, sku: string): Promise<void> => {
        answers.set(`${catalogId}/${sku}`, (await s.catalog.findBySku(catalogId, sku as Sku))?.result ?? null);
      };
      const partners = parseCatalogSource(d).partners;
      for (const partner of partners) for (const product of partner.products) await answer(partner.id, product.sku);
      for (const partner of partners) for (const product of sandboxProducts(partner, demo)) await answer(sandboxCatalogOf(partner.id), product.sku);
      return answers;
    };
    const refusal = async (d: unknown): Promise<readonly string[]> => {
      try {
        await importDoc(d);
      } catch (error) {
        if (error instanceof CatalogSourceError) return error.problems;
        throw error;
      }
      throw new Error('expected the file to be refused');
    };

    it('reports what a first import created, and numbers products, videos and entries in file order', async function () {
      const report = await importDoc(doc());
      expect(report).to.deep.equal({
        partners: { created: 2, updated: 0, unchanged: 0 },
        api_keys: { created: 4, updated: 0, unchanged: 0, revoked: 0 },
        products: { created: 7, updated: 0, unchanged: 0, deleted: 0 },
        videos: { created: 5, updated: 0, unchanged: 0, deleted: 0 },
        pdp_entries: { created: 7, updated: 0, unchanged: 0, deleted: 0, regenerated: 3 },
        // Neither partner has a sandbox section: each gets the 4 demo products, their 5 videos and 6 entries,
        // 3 of which have JSON-LD (one video has no transcript, one is unpublished, one entry names no video).
        sandbox_products: { created: 8, updated: 0, unchanged: 0, deleted: 0 },
        sandbox_videos: { created: 10, updated: 0, unchanged: 0, deleted: 0 },
        sandbox_pdp_entries: { created: 12, updated: 0, unchanged: 0, deleted: 0, regenerated: 6 },
      });
      expect(await everyAnswer(doc())).to.deep.equal(await answersInFileOrder(doc()));
    });

    it('reads a partner whose id and name come after its products as one whose come first', async function () {
      const reordered = doc();
      reordered.partners = reordered.partners.map(({ id, name, ...rest }: Record<string, unknown>) => ({ ...rest, name, id }));
      expect(Object.keys(reordered.partners[0] as object)).to.deep.equal(['api_keys', 'products', 'name', 'id']);
      await importDoc(reordered);
      expect(await everyAnswer(doc())).to.deep.equal(await answersInFileOrder(doc()));
    });

    it('keeps every ID on a re-import of the same file, writes nothing and regenerates nothing', async function () {
      await importDoc(doc());
      const before = await everyAnswer(doc());
      const report = await importDoc(doc());
      expect(report).to.deep.equal({
        partners: { created: 0, updated: 0, unchanged: 2 },
        api_keys: { created: 0, updated: 0, unchanged: 4, revoked: 0 },
        products: { created: 0, updated: 0, unchanged: 7, deleted: 0 },
        videos: { created: 0, updated: 0, unchanged: 5, deleted: 0 },
        pdp_entries: { created: 0, updated: 0, unchanged: 7, deleted: 0, regenerated: 0 },
        sandbox_products: { created: 0, updated: 0, unchanged: 8, deleted: 0 },
        sandbox_videos: { created: 0, updated: 0, unchanged: 10, deleted: 0 },
        sandbox_pdp_entries: { created: 0, updated: 0, unchanged: 12, deleted: 0, regenerated: 0 },
      });
      expect(await everyAnswer(doc())).to.deep.equal(before);
    });

    it('regenerates the JSON-LD of every entry using a video whose transcript changed, keeping IDs', async function () {
      await importDoc(doc());
      const before = await lookup('acme', 'TENT-2P');
      const changed = doc();
      tent(changed).videos[0].transcript = 'A refined transcript.';
      tent(changed).videos[2].transcript = 'Now it has one.';
      const report = await importDoc(changed);
      expect(report.videos).to.deep.equal({ created: 0, updated: 2, unchanged: 3, deleted: 0 });
      // p/126 names tent-pitch too, but without a file URL its JSON-LD stays null: rewritten, not regenerated.
      expect(report.pdp_entries).to.include({ updated: 3, regenerated: 2 });
      const after = await lookup('acme', 'TENT-2P');
      expect(after.product.id).to.equal(before.product.id);
      expect(after.product.pdp_urls.map((e) => e.id)).to.deep.equal(before.product.pdp_urls.map((e) => e.id));
      expect(after.product.pdp_urls[0]?.json_ld?.transcript).to.equal('A refined transcript.');
      // The entry on p/124 was "not generated yet" and now is.
      expect(before.product.pdp_urls[2]?.json_ld).to.equal(null);
      expect(after.product.pdp_urls[2]?.json_ld?.transcript).to.equal('Now it has one.');
    });

    it('regenerates JSON-LD when the partner name, brand or properties change', async function () {
      await importDoc(doc());
      const changed = doc();
      changed.partners[0].name = 'Acme Outdoor Group';
      tent(changed).brand = 'Acme Pro';
      tent(changed).properties = [{ name: 'Color', value: 'Blue' }];
      const report = await importDoc(changed);
      expect(report.partners).to.deep.equal({ created: 0, updated: 1, unchanged: 1 });
      expect(report.pdp_entries.regenerated).to.equal(2);
      const jsonLd = (await lookup('acme', 'TENT-2P')).product.pdp_urls[0]?.json_ld;
      expect(jsonLd?.publisher.name).to.equal('Acme Outdoor Group');
      expect(jsonLd?.about.brand.name).to.equal('Acme Pro');
      expect(jsonLd?.about.additionalProperty).to.deep.equal([{ '@type': 'PropertyValue', name: 'Color', value: 'Blue' }]);
    });

    it('makes an imported partner match the file: absent products, videos and entries go, others keep their IDs', async function () {
      await importDoc(doc());
      const shared = await lookup('acme', 'SHARED-1');
      const pitch = (await lookup('acme', 'TENT-2P')).product.videos[0]!;
      const changed = doc();
      changed.partners[0].products = acmeProducts(changed).filter((p: any) => p.sku !== 'abc-1');
      const tentDoc = tent(changed);
      // tent-pitch moves to SHARED-1; TENT-2P drops its entries that named it.
      const movedVideo = tentDoc.videos.shift();
      tentDoc.pdp_urls = tentDoc.pdp_urls.filter((e: any) => e.video_ref !== 'tent-pitch');
      acmeProducts(changed).find((p: any) => p.sku === 'SHARED-1').videos = [movedVideo];
      const report = await importDoc(changed);
      expect(report.products).to.deep.equal({ created: 0, updated: 0, unchanged: 6, deleted: 1 });
      expect(report.pdp_entries).to.include({ deleted: 2 });
      expect(await s.catalog.findBySku('acme', 'abc-1' as Sku)).to.equal(null);
      const sharedAfter = await lookup('acme', 'SHARED-1');
      expect(sharedAfter.product.id).to.equal(shared.product.id);
      expect(sharedAfter.product.videos).to.deep.equal([pitch]);
      expect((await lookup('globex', 'SHARED-1')).product.title).to.equal('Globex shared');
    });

    it('runs two imports at once one after the other: both land, the second finds nothing to change', async function () {
      const [first, second] = await Promise.all([importDoc(doc()), importDoc(doc())]);
      const reports = [first, second].sort((a, b) => b.products.created - a.products.created);
      expect(reports[0]!.products).to.include({ created: 7, unchanged: 0 });
      expect(reports[1]!.products).to.include({ created: 0, unchanged: 7 });
      expect(reports[1]!.pdp_entries.regenerated).to.equal(0);
      expect(await everyAnswer(doc())).to.deep.equal(await answersInFileOrder(doc()));
    });

    it('leaves partners absent from the file alone', async function () {
      await importDoc(doc());
      const globexOnly = doc();
      globexOnly.partners = [globexOnly.partners[1]];
      const report = await importDoc(globexOnly);
      expect(report.products).to.deep.equal({ created: 0, updated: 0, unchanged: 2, deleted: 0 });
      expect((await lookup('acme', 'TENT-2P')).product.title).to.equal('Title TENT-2P');
    });

    it('keeps nothing of a file refused after some of it was written, and lists every problem by path', async function () {
      await importDoc(doc());
      const before = await everyAnswer(doc());
      const failing = doc();
      tent(failing).title = 'Changed title';
      acmeProducts(failing).push({ ...acmeProducts(failing)[1], sku: 'NEW-1' });
      // A partner larger than a batch after acme: acme, held until then, is written before globex is read,
      // and globex's problems refuse what was written of acme too.
      failing.partners.splice(1, 0, { id: 'big', name: 'Big', products: Array.from({ length: 600 }, (_, i) => ({ ...(acmeProducts(doc())[2] as Record<string, unknown>), sku: `BIG-${i}` })) });
      failing.partners[2].products[0].image = 'ftp://img.example/x.jpg';
      delete failing.partners[2].products[1].title;
      failing.format = 'partner-catalog/v0';
      expect(await refusal(failing)).to.deep.equal([
        'format: must be "partner-catalog/v1"',
        'partners[2].products[0].image: must be an absolute http(s) URL; got "ftp://img.example/x.jpg"',
        'partners[2].products[1].title: is required',
      ]);
      expect(await everyAnswer(doc())).to.deep.equal(before);
      expect(await s.catalog.findBySku('acme', 'NEW-1' as Sku)).to.equal(null);
      expect(await s.catalog.findBySku('big', 'BIG-0' as Sku)).to.equal(null);
    });

    it('answers with what a re-import changed in a video or PDP entry alone, and with products it added', async function () {
      await importDoc(doc());
      const before = await lookup('acme', 'TENT-2P');
      const changed = doc();
      tent(changed).videos[0].name = 'Pitching it, renamed';
      tent(changed).videos[3].published = false;
      tent(changed).pdp_urls[5].retailer = 'Other shop';
      changed.partners[1].products[0].pdp_urls[0].retailer = 'Globex outlet';
      acmeProducts(changed).push({
        ...acmeProducts(changed)[1],
        sku: 'NEW-1',
        videos: [{ ...tent(changed).videos[0], ref: 'new-video' }],
        pdp_urls: [{ pdp_url: 'https://shop.example/new', retailer: null, video_ref: 'new-video', video_file_url: 'https://cdn.example/new.mp4' }],
      });
      const report = await importDoc(changed);
      expect(report.products).to.deep.equal({ created: 1, updated: 0, unchanged: 7, deleted: 0 });
      const after = await lookup('acme', 'TENT-2P');
      expect(after.product.videos.map((v) => v.name)).to.deep.equal(['Pitching it, renamed', null]);
      expect(after.product.pdp_urls.map((e) => e.retailer)).to.deep.equal(['Shop', null, 'Shop', 'Shop', 'Shop', 'Other shop']);
      expect(after.product.pdp_urls[0]?.json_ld?.name).to.equal('Pitching it, renamed');
      expect(after.product.pdp_urls[1]?.json_ld).to.equal(null);
      expect(after.product.pdp_urls.map((e) => e.id)).to.deep.equal(before.product.pdp_urls.map((e) => e.id));
      expect((await lookup('globex', 'SHARED-1')).product.pdp_urls[0]?.retailer).to.equal('Globex outlet');
      const added = await lookup('acme', 'NEW-1');
      const source = parseCatalogSource(changed).partners[0]!.products.find((p) => p.sku === 'NEW-1')!;
      const ids = { product: added.product.id, videos: added.product.videos.map((v) => v.id), pdpUrls: added.product.pdp_urls.map((e) => e.id) };
      expect(added).to.deep.equal(toLookupResult(source, ids, 'Acme Outdoor Co.'));
      expect(ids.videos[0]).to.be.above(Math.max(...after.product.videos.map((v) => v.id)));
    });

    it('regenerates the entries of a video whose upload date alone changed, and goes back to the plain object when it is taken away', async function () {
      await importDoc(doc());
      const plain = (await lookup('acme', 'TENT-2P')).product.pdp_urls[0]?.json_ld;
      await importDoc(searchable());
      const changed = searchable();
      tent(changed).videos[0].upload_date = '2026-04-01T10:30:00-04:00';
      const report = await importDoc(changed);
      expect(report.videos).to.deep.equal({ created: 0, updated: 1, unchanged: 4, deleted: 0 });
      // p/123 and p/126 use tent-pitch; p/126 has no file URL, so its JSON-LD stays null: rewritten, not regenerated.
      expect(report.pdp_entries).to.deep.equal({ created: 0, updated: 2, unchanged: 5, deleted: 0, regenerated: 1 });
      expect((await lookup('acme', 'TENT-2P')).product.pdp_urls[0]?.json_ld?.uploadDate).to.equal('2026-04-01T10:30:00-04:00');
      const removed = searchable();
      tent(removed).videos[0].upload_date = null;
      tent(removed).videos[0].thumbnail_url = null;
      expect((await importDoc(removed)).pdp_entries.regenerated).to.equal(1);
      expect(JSON.stringify((await lookup('acme', 'TENT-2P')).product.pdp_urls[0]?.json_ld)).to.equal(JSON.stringify(plain));
    });

    describe('API keys', function () {
      it('never brings back a revoked key on re-import, and revokes file keys the file dropped', async function () {
        await importDoc(doc());
        await s.revokeKey('acme-prod');
        const dropped = doc();
        dropped.partners[0].api_keys = dropped.partners[0].api_keys.filter((k: any) => k.id !== 'acme-staging');
        const report = await importDoc(dropped);
        expect(report.api_keys).to.deep.equal({ created: 0, updated: 0, unchanged: 3, revoked: 1 });
        expect(await s.keys.findActiveByHash(hashApiKey(KEYS.acme))).to.equal(null);
        expect(await s.keys.findActiveByHash(hashApiKey(KEYS.acmeSecond))).to.equal(null);
        expect(await s.keys.findActiveByHash(hashApiKey(KEYS.globex))).to.deep.equal(principalOf('globex-prod', 'globex', 'live'));
      });

      it('leaves keys issued by an operator alone on re-import', async function () {
        await importDoc(doc());
        await s.issueKey('cli-key', 'acme', hashApiKey(KEYS.unknown));
        await importDoc(doc());
        expect(await s.keys.findActiveByHash(hashApiKey(KEYS.unknown))).to.deep.equal(principalOf('cli-key', 'acme', 'live'));
      });

      it('moves a key listed under another partner, without revoking it', async function () {
        await importDoc(doc());
        const moved = doc();
        const key = moved.partners[0].api_keys.find((k: any) => k.id === 'acme-staging');
        moved.partners[0].api_keys = moved.partners[0].api_keys.filter((k: any) => k !== key);
        moved.partners[1].api_keys.push(key);
        const report = await importDoc(moved);
        expect(report.api_keys).to.include({ updated: 1, revoked: 0 });
        expect(await s.keys.findActiveByHash(hashApiKey(KEYS.acmeSecond))).to.deep.equal(principalOf('acme-staging', 'globex', 'live'));
      });
    });

    it('tells, once committed, what it did to the keys: withdrawn and added, so instances without the database can apply it; nothing when it changed none', async function () {
      const calls: (KeyChanges | null)[] = [];
      const told = async (d: unknown): Promise<{ withdrawn: string[]; added: string[] } | null> => {
        calls.length = 0;
        await new ImportCatalog(s.store, systemClock, processCursorKeys(), demoProducts).execute(piecesOfDocument(d), (c) => {
          calls.push(c.keys);
          return Promise.resolve();
        });
        expect(calls).to.have.length(1);
        return calls[0] === null ? null : { withdrawn: [...calls[0]!.withdrawn].sort(), added: [...calls[0]!.added].sort() };
      };
      expect(await told(doc())).to.deep.equal({ withdrawn: [], added: ['acme-prod', 'acme-staging', 'globex-prod'] });
      expect(await told(doc())).to.equal(null);
      const changed = doc();
      const acmeKeys = changed.partners[0].api_keys as any[];
      acmeKeys.find((k) => k.id === 'acme-prod').sha256 = hashApiKey(KEYS.unknown);
      const staging = acmeKeys.find((k) => k.id === 'acme-staging');
      changed.partners[0].api_keys = acmeKeys.filter((k) => k !== staging);
      changed.partners[1].api_keys.push(staging, { id: 'globex-new', sha256: '1'.repeat(64), revoked: false });
      (changed.partners[1].api_keys as { id: string; revoked: boolean }[]).find((k) => k.id === 'globex-prod')!.revoked = true;
      // A hash or partner changed is withdrawn (what instances hold of it no longer stands) and added (they must read it).
      expect(await told(changed)).to.deep.equal({ withdrawn: ['acme-prod', 'acme-staging', 'globex-prod'], added: ['acme-prod', 'acme-staging', 'globex-new'] });
      // Back as they were, and globex's keys dropped: the live one the file dropped is withdrawn, the revoked one is not.
      const dropped = doc();
      dropped.partners[1].api_keys = [];
      expect(await told(dropped)).to.deep.equal({ withdrawn: ['acme-prod', 'acme-staging', 'globex-new'], added: ['acme-prod', 'acme-staging'] });
      // A refused file tells nothing.
      const refused = doc();
      refused.partners[0].api_keys = [];
      refused.partners[0].products[0].sku = '';
      expect(await told(refused).catch((error: unknown) => error)).to.be.instanceOf(CatalogSourceError);
      expect(calls).to.deep.equal([]);
    });

    describe('the changes feed', function () {
      const feedAfter = async (partnerId: string, seq = 0): Promise<FeedEntry[]> => [...(await s.feed.read(partnerId, seq, 1_000)).entries];
      const lastSeq = async (partnerId: string): Promise<number> => (await feedAfter(partnerId)).at(-1)?.seq ?? 0;
      const summary = (entries: readonly FeedEntry[]) => entries.map((e) => `${e.change} ${e.sku}`);

      it('lists every product of a first import once, in file order, with the ETag its lookup sends', async function () {
        await importDoc(doc());
        const entries = await feedAfter('acme');
        expect(summary(entries)).to.deep.equal(acmeProducts(doc()).map((p: { sku: string }) => `upserted ${p.sku}`));
        for (const entry of entries) {
          const answer = await lookup('acme', entry.sku);
          expect(entry.etag).to.equal(etagOf(lookupBody(answer)));
          expect(entry.productId).to.equal(answer.product.id);
        }
        expect(summary(await feedAfter('globex'))).to.deep.equal(['upserted SHARED-1', 'upserted GLOBEX-ONLY']);
      });

      it('adds nothing for an import that changes nothing, and each changed, added or deleted product once after', async function () {
        await importDoc(doc());
        const mark = await lastSeq('acme');
        await importDoc(doc());
        expect(await feedAfter('acme', mark)).to.deep.equal([]);
        const changed = doc();
        const products = acmeProducts(changed);
        tent(changed).videos[0].transcript = 'Refined once.';
        products[2].title = 'Retitled';
        products[3].status = 'active';
        changed.partners[0].products = products.filter((p: { sku: string }) => p.sku !== 'abc-1');
        changed.partners[0].products.push({ ...products[2], sku: 'NEW-1' }, { ...products[2], sku: 'NEW-2', videos: [], pdp_urls: [] });
        await importDoc(changed);
        tent(changed).videos[0].transcript = 'Refined twice.';
        await importDoc(changed);
        const entries = await feedAfter('acme', mark);
        // TENT-2P changed in both imports: it appears once, at its latest change, after the others.
        expect(summary(entries)).to.deep.equal([
          'upserted ABC-1', 'upserted OLD.STOVE_1', 'upserted NEW-1', 'upserted NEW-2', 'deleted abc-1', 'upserted TENT-2P',
        ]);
        expect(entries.find((e) => e.sku === 'abc-1')?.etag).to.equal(null);
        expect(entries.at(-1)?.etag).to.equal(etagOf(lookupBody(await lookup('acme', 'TENT-2P'))));
        expect(entries.map((e) => e.seq)).to.deep.equal([...entries.map((e) => e.seq)].sort((a, b) => a - b));
        expect(await feedAfter('globex', await lastSeq('globex'))).to.deep.equal([]);
      });

      it('lists a product deleted and then listed again once, as upserted at its return, and counts positions on', async function () {
        await importDoc(doc());
        const mark = await lastSeq('acme');
        const without = doc();
        without.partners[0].products = acmeProducts(without).filter((p: { sku: string }) => p.sku !== 'abc-1');
        await importDoc(without);
        const deletedAt = await lastSeq('acme');
        expect(summary(await feedAfter('acme', mark))).to.deep.equal(['deleted abc-1']);
        await importDoc(doc());
        const entries = await feedAfter('acme', mark);
        expect(summary(entries)).to.deep.equal(['upserted abc-1']);
        expect(entries[0]!.seq).to.be.above(deletedAt);
        expect(entries[0]!.etag).to.equal(etagOf(lookupBody(await lookup('acme', 'abc-1'))));
        // From the beginning, too, each product appears once.
        const all = summary(await feedAfter('acme'));
        expect(all.filter((line) => line.endsWith(' abc-1'))).to.deep.equal(['upserted abc-1']);
        expect(new Set(all).size).to.equal(all.length);
      });

      it('lists a change of a published video\'s name but not of an unpublished one\'s, which no lookup shows', async function () {
        await importDoc(doc());
        const mark = await lastSeq('acme');
        const changed = doc();
        // tent-draft is not published: its name is in no answer.
        tent(changed).videos[1].name = 'Renamed while unpublished';
        const report = await importDoc(changed);
        expect(report.videos.updated).to.equal(1);
        expect(await feedAfter('acme', mark)).to.deep.equal([]);
        tent(changed).videos[0].name = 'Renamed while published';
        await importDoc(changed);
        expect(summary(await feedAfter('acme', mark))).to.deep.equal(['upserted TENT-2P']);
      });

      it('keeps deleted products 30 days, then expires the cursors from before them', async function () {
        const day = 24 * 60 * 60 * 1000;
        let now = Date.parse('2026-01-01T00:00:00Z');
        const importAt = (d: unknown) => new ImportCatalog(s.store, { now: () => now }, processCursorKeys(), demoProducts).execute(piecesOfDocument(d));
        const clock = { now: () => now };
        const cursorKeys = processCursorKeys({ clock });
        const read = (cursor: string | undefined) => new ReadChanges(s.feed, cursorKeys, clock).execute({ partnerId: 'acme', cursor, limit: '1000' });
        await importAt(doc());
        const before = (await read(undefined)).nextCursor;
        const dropped = doc();
        dropped.partners[0].products = acmeProducts(dropped).filter((p: { sku: string }) => p.sku !== 'abc-1');
        now += day;
        await importAt(dropped);
        const afterDeletion = (await read(undefined)).nextCursor;
        now += 30 * day;
        await importAt(dropped);
        expect(summary((await read(before)).changes.map((c) => ({ ...c, seq: 0 })))).to.deep.equal(['deleted abc-1']);
        now += 1;
        await importAt(dropped);
        let refused: unknown;
        try {
          await read(before);
        } catch (error) {
          refused = error;
        }
        expect(refused).to.be.instanceOf(DomainError).and.to.have.property('code', 'cursor_expired');
        expect((await read(afterDeletion)).changes).to.deep.equal([]);
        expect((await read(undefined)).changes.map((c) => c.sku)).to.not.include('abc-1');
        const key = await cursorKeys.cursorKey();
        expect(decodeCursor(key, 'acme', afterDeletion, now)).to.be.above(decodeCursor(key, 'acme', before, now));
      });
    });

    describe('what an import writes, and tells the instances', function () {
      /** Imports through the use case, noting the session calls and what the import told. */
      const importNoted = async (d: unknown, store = s.store): Promise<{ report: ImportReport; calls: string[]; told: ImportChanges }> => {
        const calls: string[] = [];
        let told: ImportChanges | undefined;
        const report = await new ImportCatalog(noting(store, calls), systemClock, processCursorKeys(), demoProducts).execute(piecesOfDocument(d), (changes) => {
          told = changes;
          return Promise.resolve();
        });
        return { report, calls, told: told! };
      };
      /** The catalogs the calls named. */
      const named = (calls: readonly string[]): string[] => [...new Set(calls.filter((call) => call.includes(' ')).map((call) => call.split(' ')[1]!))].sort();
      /**
       * The report of importing `changed` over `base`, made the quick way, is the one the same change
       * gets when every catalog is examined row by row: the counts are exact.
       */
      const expectExactCounts = async (base: unknown, changed: unknown): Promise<ImportReport> => {
        await importDoc(base);
        const rowByRow = await importDocument(examinedRowByRow(s.store), changed);
        await importDoc(base);
        const quick = await importDoc(changed);
        expect(quick).to.deep.equal(rowByRow);
        return quick;
      };

      it('reads two things and writes nothing for a file it already holds, and tells of no catalog and no key', async function () {
        const d = manyPartnersDocument(50);
        await importDoc(d);
        const { report, calls, told } = await importNoted(d);
        // The stored catalogs of every partner and sandbox, and the keys: no row of a product, no demo sandbox written again.
        expect(calls).to.deep.equal(['catalogs', 'apiKeys']);
        expect(told).to.deep.equal({ catalogs: [], keys: null });
        expect(report).to.deep.equal({
          partners: { created: 0, updated: 0, unchanged: 50 },
          api_keys: { created: 0, updated: 0, unchanged: 50, revoked: 0 },
          products: { created: 0, updated: 0, unchanged: 250, deleted: 0 },
          videos: { created: 0, updated: 0, unchanged: 200, deleted: 0 },
          pdp_entries: { created: 0, updated: 0, unchanged: 300, deleted: 0, regenerated: 0 },
          sandbox_products: { created: 0, updated: 0, unchanged: 200, deleted: 0 },
          sandbox_videos: { created: 0, updated: 0, unchanged: 250, deleted: 0 },
          sandbox_pdp_entries: { created: 0, updated: 0, unchanged: 300, deleted: 0, regenerated: 0 },
        });
      });

      it('reads, writes and tells of only the partner one of whose 250 products changed: not its demo sandbox, no other partner, no key', async function () {
        const changed = manyPartnersDocument(50);
        changed.partners[17].products[1].title = 'Retitled';
        const report = await expectExactCounts(manyPartnersDocument(50), changed);
        expect(report.products).to.deep.equal({ created: 0, updated: 1, unchanged: 249, deleted: 0 });
        expect(report.sandbox_products).to.deep.equal({ created: 0, updated: 0, unchanged: 200, deleted: 0 });
        await importDoc(manyPartnersDocument(50));
        const { calls, told } = await importNoted(changed);
        expect(named(calls)).to.deep.equal(['p-17']);
        expect(told).to.deep.equal({ catalogs: ['p-17'], keys: null });
        expect((await lookup('p-17', 'abc-1')).product.title).to.equal('Retitled');
      });

      it('tells of a partner\'s sandbox alone when only its sandbox section changed', async function () {
        const withSandboxes = (): Doc => {
          const d = doc();
          for (const partner of d.partners) partner.sandbox = { products: structuredClone(acmeProducts(doc())).slice(0, 2) };
          return d;
        };
        const changed = withSandboxes();
        changed.partners[0].sandbox.products[0].title = 'Sandbox tent';
        const report = await expectExactCounts(withSandboxes(), changed);
        expect(report.sandbox_products).to.deep.equal({ created: 0, updated: 1, unchanged: 3, deleted: 0 });
        await importDoc(withSandboxes());
        const { calls, told } = await importNoted(changed);
        expect(named(calls)).to.deep.equal(['~acme']);
        expect(told).to.deep.equal({ catalogs: ['~acme'], keys: null });
        expect((await lookup('~acme', 'TENT-2P')).product.title).to.equal('Sandbox tent');
        expect((await lookup('acme', 'TENT-2P')).product.title).to.equal('Title TENT-2P');
      });

      it('tells of a renamed partner and of its sandbox, whose answers name it as publisher', async function () {
        const renamed = doc();
        renamed.partners[1].name = 'Globex Worldwide';
        const report = await expectExactCounts(doc(), renamed);
        expect(report.partners).to.deep.equal({ created: 0, updated: 1, unchanged: 1 });
        await importDoc(doc());
        const { told } = await importNoted(renamed);
        expect(told).to.deep.equal({ catalogs: ['globex', '~globex'], keys: null });
        expect((await lookup('~globex', 'TENT-2P')).product.pdp_urls.find((entry) => entry.json_ld !== null)?.json_ld?.publisher.name).to.equal('Globex Worldwide');
      });

      it('counts exactly what a file that adds, drops, changes and moves rows and keys does', async function () {
        const changed = doc();
        changed.partners[0].products = acmeProducts(changed).filter((p: any) => p.sku !== 'abc-1');
        tent(changed).videos[0].transcript = 'Refined.';
        changed.partners[1].products.push({ ...acmeProducts(doc())[2], sku: 'NEW-1' });
        changed.partners[1].sandbox = { products: [acmeProducts(doc())[0]] };
        changed.partners[1].api_keys.push(changed.partners[0].api_keys.pop());
        await expectExactCounts(doc(), changed);
        await expectExactCounts(changed, doc());
      });

      it('keeps a partner larger than a batch, between smaller ones, in file order, and tells of nothing when it did not change', async function () {
        const template = acmeProducts(doc())[2] as Record<string, unknown>;
        const d = doc();
        d.partners.splice(1, 0, { id: 'big', name: 'Big', products: Array.from({ length: 1_200 }, (_, i) => ({ ...template, sku: `BIG-${i}` })) });
        await importDoc(d);
        expect(await everyAnswer(d)).to.deep.equal(await answersInFileOrder(d));
        const { calls, told } = await importNoted(d);
        expect(named(calls)).to.deep.equal(['big']);
        expect(calls.filter((call) => /^(save|delete|record|drop)/.test(call))).to.deep.equal([]);
        expect(told).to.deep.equal({ catalogs: [], keys: null });
        const changed = structuredClone(d);
        changed.partners[1].products[700].title = 'Retitled';
        expect((await importNoted(changed)).told).to.deep.equal({ catalogs: ['big'], keys: null });
      });

      it('tells again, when the same file comes again, of what an announcement that failed was to tell: catalogs and keys', async function () {
        await importDoc(doc());
        const changed = doc();
        tent(changed).title = 'Retitled';
        changed.partners[1].api_keys = [];
        const failing = new ImportCatalog(s.store, systemClock, processCursorKeys(), demoProducts).execute(piecesOfDocument(changed), () => Promise.reject(new Error('Redis is away')));
        expect(await failing.catch((error: unknown) => error)).to.have.property('message', 'Redis is away');
        // The import stands.
        expect((await lookup('acme', 'TENT-2P')).product.title).to.equal('Retitled');
        const again = await importNoted(changed);
        expect(again.report.products).to.deep.include({ created: 0, updated: 0, deleted: 0 });
        expect(again.told).to.deep.equal({ catalogs: ['acme', 'globex'], keys: { withdrawn: [], added: [] } });
        // Told at last, the file is known again.
        expect((await importNoted(changed)).told).to.deep.equal({ catalogs: [], keys: null });
      });
    });

    it('imports the pieces of a document handed on one at a time or in groups alike', async function () {
      const pieces = [...piecesOfDocument(doc())];
      async function* grouped() {
        for (let i = 0; i < pieces.length; i += 3) yield await Promise.resolve(pieces.slice(i, i + 3));
      }
      await new ImportCatalog(s.store, systemClock, processCursorKeys(), demoProducts).execute(grouped());
      expect(await everyAnswer(doc())).to.deep.equal(await answersInFileOrder(doc()));
    });
  });
}
