import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { ProductCatalog } from '../../src/application/lookup/product-catalog.js';
import type { Catalog } from '../../src/domain/catalog.js';
import type { LookupAnswer } from '../../src/domain/lookup-answer.js';
import { MAX_BATCH_VALUES } from '../../src/domain/lookup-batch.js';
import { etagOf } from '../../src/domain/lookup-body.js';
import { toLookupResult, type LookupResult } from '../../src/domain/lookup-result.js';
import type { ProductId } from '../../src/domain/product-id.js';
import type { Sku } from '../../src/domain/sku.js';
import { fixtureCatalog, searchableFixtureCatalog } from '../fixtures/catalog-fixture.js';

export interface CatalogUnderTest {
  readonly catalog: ProductCatalog;
  close(): Promise<void>;
}

/** Builds an adapter holding exactly the given catalog. */
export type CatalogFactory = (catalog: Catalog) => Promise<CatalogUnderTest>;

const sku = (s: string): Sku => s as Sku;

/**
 * The fixture's answers as served before catalogs could carry thumbnails and upload dates, by
 * `partner/sku`, IDs zeroed (storages number rows differently). Served bytes carry ETags that
 * partners revalidate against: a catalog without those fields must keep every byte.
 */
const GOLDEN_ANSWERS = JSON.parse(readFileSync(new URL('../fixtures/fixture-answers.golden.json', import.meta.url), 'utf8')) as Record<string, LookupResult>;

/** The answer as it is serialized, with its IDs zeroed; key order is kept. */
function withoutIds(result: LookupResult): string {
  const copy = JSON.parse(JSON.stringify(result)) as LookupResult;
  copy.product.id = 0;
  for (const video of copy.product.videos) video.id = 0;
  for (const entry of copy.product.pdp_urls) entry.id = 0;
  return JSON.stringify(copy);
}
const id = (n: number): ProductId => n as ProductId;

/** Opens the adapter on `source` around the enclosing suite; `subject()` is valid inside its tests. */
function openedForSuite(factory: CatalogFactory, source: Catalog) {
  let opened: CatalogUnderTest | undefined;
  before(async function () {
    opened = await factory(source);
  });
  after(async function () {
    await opened?.close();
  });
  const subject = (): CatalogUnderTest => {
    if (opened === undefined) throw new Error('the adapter is open only inside the suite');
    return opened;
  };
  const mustFind = async (partnerId: string, s: string): Promise<LookupResult> => {
    const found = await subject().catalog.findBySku(partnerId, sku(s));
    if (found === null) throw new Error(`expected ${partnerId}/${s} to be found`);
    return found.result;
  };
  return { subject, mustFind };
}

/** Every ProductCatalog adapter must pass these, against the shared fixture. */
/** `searchFields: false` for a storage whose catalogs predate thumbnails and upload dates. */
export function productCatalogContract(adapterName: string, factory: CatalogFactory, options: { searchFields?: boolean } = {}): void {
  describe(`ProductCatalog contract: ${adapterName}`, function () {
    const source = fixtureCatalog();
    const { subject, mustFind } = openedForSuite(factory, source);

    /** The domain's view of the fixture product, with the IDs the adapter assigned. */
    const expected = (partnerId: string, s: string, actual: LookupResult): LookupResult => {
      const partner = source.partners.find((p) => p.id === partnerId)!;
      const product = partner.products.find((p) => p.sku === s)!;
      const allVideoIds = actual.product.videos.map((v) => v.id);
      const videoIds: number[] = [];
      let next = 0;
      for (const v of product.videos) videoIds.push(v.published ? allVideoIds[next++]! : -1);
      return toLookupResult(product, {
        product: actual.product.id,
        videos: videoIds,
        pdpUrls: actual.product.pdp_urls.map((e) => e.id),
      }, partner.name);
    };

    it('finds a product by exact SKU with every documented field and nothing else', async function () {
      const found = await mustFind('acme', 'TENT-2P');
      expect(found).to.deep.equal(expected('acme', 'TENT-2P', found));
      expect(found.product.pdp_urls.map((e) => e.pdp_url)).to.deep.equal([
        'https://shop.example/p/123', 'https://outlet.example/tent?id=9', 'https://shop.example/p/124',
        'https://shop.example/p/125', 'https://shop.example/p/126', 'https://shop.example/p/127',
      ]);
    });

    it('serializes every answer byte for byte as before thumbnails and upload dates existed', async function () {
      let compared = 0;
      for (const partner of source.partners) {
        for (const product of partner.products) {
          const key = `${partner.id}/${product.sku}`;
          expect(GOLDEN_ANSWERS[key], key).to.not.equal(undefined);
          expect(withoutIds(await mustFind(partner.id, product.sku)), key).to.equal(JSON.stringify(GOLDEN_ANSWERS[key]));
          compared += 1;
        }
      }
      expect(compared).to.equal(Object.keys(GOLDEN_ANSWERS).length);
    });

    it('answers with the compact body of its result under data, and that body\'s ETag, by SKU and by ID alike', async function () {
      for (const partner of source.partners) {
        for (const product of partner.products) {
          const key = `${partner.id}/${product.sku}`;
          const bySku = (await subject().catalog.findBySku(partner.id, sku(product.sku)))!;
          const result = bySku.result;
          expect(bySku.body.toString('utf8'), key).to.equal(`{"data":${JSON.stringify(result)}}`);
          expect(bySku.etag, key).to.equal(etagOf(bySku.body));
          const byId = (await subject().catalog.findById(partner.id, id(result.product.id)))!;
          expect([byId.body.equals(bySku.body), byId.etag], key).to.deep.equal([true, bySku.etag]);
        }
      }
    });

    it('lists only published videos, in catalog order', async function () {
      const found = await mustFind('acme', 'TENT-2P');
      expect(found.product.videos.map((v) => v.name)).to.deep.equal(['Video tent-pitch', null, null]);
      expect(found.product.videos[2]).to.include({ aspect_ratio: '9x16', length: 30 });
    });

    it('holds JSON-LD only where a published video with a transcript and a file URL is named', async function () {
      const found = await mustFind('acme', 'TENT-2P');
      const generated = found.product.pdp_urls.map((e) => e.json_ld !== null);
      expect(generated).to.deep.equal([true, true, false, false, false, false]);
      for (const entry of found.product.pdp_urls) {
        if (entry.json_ld === null) continue;
        expect(entry.json_ld['@id']).to.equal(entry.pdp_url);
        expect(entry.json_ld.contentUrl).to.equal(entry.video_file_url);
      }
    });

    it('matches SKUs case-sensitively', async function () {
      expect((await mustFind('acme', 'abc-1')).product.title).to.equal('Title abc-1');
      expect((await mustFind('acme', 'ABC-1')).product.title).to.equal('Upper-case ABC');
      expect(await subject().catalog.findBySku('acme', sku('Abc-1'))).to.equal(null);
      expect(await subject().catalog.findBySku('acme', sku('tent-2p'))).to.equal(null);
    });

    it('keeps each partner to its own catalog, even for a shared SKU', async function () {
      const acme = await mustFind('acme', 'SHARED-1');
      const globex = await mustFind('globex', 'SHARED-1');
      expect(acme.product.title).to.equal('Acme shared');
      expect(globex.product.title).to.equal('Globex shared');
      expect(acme.product.id).to.not.equal(globex.product.id);
      expect(globex.product.pdp_urls[0]?.json_ld?.publisher.name).to.equal('Globex Retail');
      expect(await subject().catalog.findBySku('acme', sku('GLOBEX-ONLY'))).to.equal(null);
      expect(await subject().catalog.findBySku('nobody', sku('SHARED-1'))).to.equal(null);
    });

    it('returns an inactive product with its status', async function () {
      const found = await mustFind('acme', 'OLD.STOVE_1');
      expect(found.status).to.equal('inactive');
      expect(found).to.deep.equal(expected('acme', 'OLD.STOVE_1', found));
    });

    it('keeps a null description null', async function () {
      expect((await mustFind('acme', 'abc-1')).product.description).to.equal(null);
    });

    it('finds a product by ID only within its own partner', async function () {
      const acme = await mustFind('acme', 'TENT-2P');
      const globexOnly = await mustFind('globex', 'GLOBEX-ONLY');
      expect((await subject().catalog.findById('acme', id(acme.product.id)))?.result).to.deep.equal(acme);
      expect(await subject().catalog.findById('globex', id(acme.product.id))).to.equal(null);
      expect(await subject().catalog.findById('acme', id(globexOnly.product.id))).to.equal(null);
      expect(await subject().catalog.findById('acme', id(Number.MAX_SAFE_INTEGER))).to.equal(null);
    });

    /** Each answer as its body and ETag, for comparison; null stays null. */
    const served = (answers: readonly (LookupAnswer | null)[]): ([string, string] | null)[] =>
      answers.map((answer) => (answer === null ? null : [answer.body.toString('utf8'), answer.etag]));

    it('reads many at once exactly as one at a time, in the order asked, null for a value the partner has not', async function () {
      const { catalog } = subject();
      const everyId = await Promise.all(source.partners.flatMap((p) => p.products.map(async (product) => (await mustFind(p.id, product.sku)).product.id)));
      for (const partner of source.partners) {
        const skus = [...source.partners.flatMap((p) => p.products.map((product) => product.sku)).reverse(), 'NOPE', 'tent-2p', 'Abc-1'].map(sku);
        const ids = [...everyId, 999_999, Number.MAX_SAFE_INTEGER].map(id);
        expect(served(await catalog.findManyBySku(partner.id, skus)), partner.id)
          .to.deep.equal(served(await Promise.all(skus.map((s) => catalog.findBySku(partner.id, s)))));
        expect(served(await catalog.findManyById(partner.id, ids)), partner.id)
          .to.deep.equal(served(await Promise.all(ids.map((n) => catalog.findById(partner.id, n)))));
      }
      expect(await catalog.findManyBySku('nobody', [sku('SHARED-1')])).to.deep.equal([null]);
      expect([await catalog.findManyBySku('acme', []), await catalog.findManyById('acme', [])]).to.deep.equal([[], []]);
    });

    it(`reads more than ${MAX_BATCH_VALUES} at once, a value asked twice answered twice`, async function () {
      const { catalog } = subject();
      const missing = Array.from({ length: MAX_BATCH_VALUES + 10 }, (_, i) => `MISSING-${i}`);
      const skus = ['TENT-2P', ...missing, 'abc-1', 'TENT-2P'].map(sku);
      expect((await catalog.findManyBySku('acme', skus)).map((answer) => answer?.result.product.title ?? null))
        .to.deep.equal(['Title TENT-2P', ...missing.map(() => null), 'Title abc-1', 'Title TENT-2P']);
      const tent = (await mustFind('acme', 'TENT-2P')).product.id;
      const ids = [...missing.map((_, i) => 1_000_000 + i), tent, tent].map(id);
      expect((await catalog.findManyById('acme', ids)).map((answer) => answer?.result.sku ?? null)).to.deep.equal([...missing.map(() => null), 'TENT-2P', 'TENT-2P']);
    });

    it('assigns distinct positive IDs to products, videos and PDP entries', async function () {
      const all = await Promise.all([
        ...['TENT-2P', 'abc-1', 'ABC-1', 'OLD.STOVE_1', 'SHARED-1'].map((s) => mustFind('acme', s)),
        ...['SHARED-1', 'GLOBEX-ONLY'].map((s) => mustFind('globex', s)),
      ]);
      for (const ids of [
        all.map((r) => r.product.id),
        all.flatMap((r) => r.product.videos.map((v) => v.id)),
        all.flatMap((r) => r.product.pdp_urls.map((e) => e.id)),
      ]) {
        expect(new Set(ids).size).to.equal(ids.length);
        for (const n of ids) expect(Number.isSafeInteger(n) && n > 0).to.equal(true);
      }
    });
  });

  if (options.searchFields === false) return;
  describe(`ProductCatalog contract: ${adapterName}, a catalog with thumbnails and upload dates`, function () {
    const source = searchableFixtureCatalog();
    const { mustFind } = openedForSuite(factory, source);

    it('serves the search-engine keys for an entry whose video has both fields', async function () {
      const tent = await mustFind('acme', 'TENT-2P');
      const [pitch, pack, , , noFile] = tent.product.pdp_urls;
      expect(pitch?.json_ld).to.include({
        thumbnailUrl: 'https://img.example/thumbs/tent-pitch.jpg', uploadDate: '2026-03-14', duration: 'PT1M33S',
      });
      expect(pitch?.json_ld?.about).to.include({ name: 'Title TENT-2P', image: 'https://img.example/TENT-2P.jpg' });
      expect(noFile?.json_ld).to.equal(null);
      // tent-pack has a thumbnail but no upload date: its object is the one served before either existed.
      expect(JSON.stringify(pack?.json_ld)).to.equal(JSON.stringify(GOLDEN_ANSWERS['acme/TENT-2P']?.product.pdp_urls[1]?.json_ld));
      const globex = await mustFind('globex', 'SHARED-1');
      expect(globex.product.pdp_urls[0]?.json_ld).to.include({ uploadDate: '2026-03-14T09:00:00+01:00', duration: 'PT1M33S' });
    });

    it('answers exactly what the domain builds, and every product without both fields as before', async function () {
      for (const partner of source.partners) {
        for (const product of partner.products) {
          const key = `${partner.id}/${product.sku}`;
          const found = await mustFind(partner.id, product.sku);
          const ids = { product: found.product.id, videos: [] as number[], pdpUrls: found.product.pdp_urls.map((e) => e.id) };
          let next = 0;
          for (const v of product.videos) ids.videos.push(v.published ? found.product.videos[next++]!.id : -1);
          expect(JSON.stringify(found), key).to.equal(JSON.stringify(toLookupResult(product, ids, partner.name)));
          const searchable = product.videos.some((v) => v.thumbnailUrl !== null && v.uploadDate !== null);
          if (!searchable) expect(withoutIds(found), key).to.equal(JSON.stringify(GOLDEN_ANSWERS[key]));
        }
      }
    });
  });
}
