import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { IMPORT_LOCK, importCatalog } from '../../src/adapters/mysql/import-catalog.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { parseCatalogSource } from '../../src/domain/catalog-source.js';
import { toLookupResult, type LookupResult } from '../../src/domain/lookup-result.js';
import type { Sku } from '../../src/domain/sku.js';
import { videoRow } from '../../src/adapters/mysql/catalog-rows.js';
import { fixtureCatalog, fixtureDocument, KEYS, searchableFixtureDocument } from '../fixtures/catalog-fixture.js';
import { useTestDatabase } from '../support/mariadb.js';

type Doc = ReturnType<typeof fixtureDocument> & { partners: any[] };

const doc = (): Doc => fixtureDocument() as Doc;
const acmeProducts = (d: Doc): any[] => (d.partners[0] as { products: any[] }).products;
const tent = (d: Doc): any => acmeProducts(d).find((p: any) => p.sku === 'TENT-2P');

describe('MySQL import', function () {
  const testDb = useTestDatabase();
  let db: Kysely<Database>;
  let catalog: MysqlProductCatalog;

  const lookup = async (partnerId: string, sku: string): Promise<LookupResult> => {
    const found = await catalog.findBySku(partnerId, sku as Sku);
    if (found === null) throw new Error(`${partnerId}/${sku} not found`);
    return found;
  };
  const importDoc = (d: Doc) => importCatalog(db, parseCatalogSource(d));
  const rowCounts = async (): Promise<number[]> => Promise.all(
    (['partners', 'api_keys', 'products', 'product_lookups', 'videos', 'pdp_entries'] as const).map(async (table) =>
      Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)),
  );

  before(function () {
    db = testDb.db;
    catalog = new MysqlProductCatalog(db);
  });
  beforeEach(async function () {
    for (const table of ['api_keys', 'pdp_entries', 'videos', 'products', 'partners'] as const) await db.deleteFrom(table).execute();
  });

  it('migrates idempotently: a second run applies nothing', async function () {
    expect(await migrateToLatest(db)).to.deep.equal([]);
  });

  it('reports what a first import created', async function () {
    const report = await importDoc(doc());
    expect(report).to.deep.equal({
      partners: { created: 2, updated: 0, unchanged: 0 },
      api_keys: { created: 4, updated: 0, unchanged: 0, revoked: 0 },
      products: { created: 7, updated: 0, unchanged: 0, deleted: 0 },
      videos: { created: 5, updated: 0, unchanged: 0, deleted: 0 },
      pdp_entries: { created: 7, updated: 0, unchanged: 0, deleted: 0, regenerated: 3 },
    });
  });

  it('keeps every ID on a re-import of the same file, writes nothing and regenerates nothing', async function () {
    await importDoc(doc());
    const before = await lookup('acme', 'TENT-2P');
    const report = await importDoc(doc());
    expect(report).to.deep.equal({
      partners: { created: 0, updated: 0, unchanged: 2 },
      api_keys: { created: 0, updated: 0, unchanged: 4, revoked: 0 },
      products: { created: 0, updated: 0, unchanged: 7, deleted: 0 },
      videos: { created: 0, updated: 0, unchanged: 5, deleted: 0 },
      pdp_entries: { created: 0, updated: 0, unchanged: 7, deleted: 0, regenerated: 0 },
    });
    expect(await lookup('acme', 'TENT-2P')).to.deep.equal(before);
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
    expect(await catalog.findBySku('acme', 'abc-1' as Sku)).to.equal(null);
    expect((await rowCounts())[3]).to.equal(6);
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
    await importDoc(doc());
    expect(await rowCounts()).to.deep.equal([2, 4, 7, 7, 5, 7]);
  });

  it('leaves partners absent from the file alone', async function () {
    await importDoc(doc());
    const globexOnly = doc();
    globexOnly.partners = [globexOnly.partners[1]];
    const report = await importDoc(globexOnly);
    expect(report.products).to.deep.equal({ created: 0, updated: 0, unchanged: 2, deleted: 0 });
    expect((await lookup('acme', 'TENT-2P')).product.title).to.equal('Title TENT-2P');
  });

  it('changes nothing when a file fails part-way: the import is one transaction', async function () {
    await importDoc(doc());
    const before = { rows: await rowCounts(), tent: await lookup('acme', 'TENT-2P') };
    const failing = doc();
    tent(failing).title = 'Changed title';
    acmeProducts(failing).push({ ...acmeProducts(failing)[1], sku: 'NEW-1' });
    // Passes validation, but a video ref longer than its column is refused after the products are written.
    tent(failing).videos.push({ ...tent(failing).videos[0], ref: 'r'.repeat(300) });
    let failure: unknown;
    try {
      await importDoc(failing);
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(Error);
    expect(await rowCounts()).to.deep.equal(before.rows);
    expect(await lookup('acme', 'TENT-2P')).to.deep.equal(before.tent);
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

  describe('a database imported before answers were stored', function () {
    // Kysely runs migrations in order only: forgetting 0002 means forgetting the ones after it too.
    const forgetMigration = () => sql`delete from kysely_migration where name in ('0002_product_lookup_document', '0003_video_search_fields')`.execute(db);
    const MIGRATED = ['0002_product_lookup_document', '0003_video_search_fields'];
    const answerOf = (sku: string) => sql`product_lookups.product_id = (select id from products where partner_id = 'acme' and sku = ${sku})`;

    it('gets every answer built by the migration, and rewritten by the next import', async function () {
      await importDoc(doc());
      const before = await lookup('acme', 'TENT-2P');
      await sql`drop table product_lookups`.execute(db);
      await sql`alter table videos drop column thumbnail_url, drop column upload_date`.execute(db);
      await forgetMigration();
      expect(await migrateToLatest(db)).to.deep.equal(MIGRATED);
      expect(await lookup('acme', 'TENT-2P')).to.deep.equal(before);
      // An answer the migration built is rewritten from the file by the next import, even with no change in it.
      await sql`update product_lookups set lookup = json_set(lookup, '$.product.title', 'Stale') where ${answerOf('TENT-2P')}`.execute(db);
      const report = await importDoc(doc());
      expect(report.products).to.deep.equal({ created: 0, updated: 0, unchanged: 7, deleted: 0 });
      expect(await lookup('acme', 'TENT-2P')).to.deep.equal(before);
    });

    it('runs the migration again after it stopped part-way, filling only what is missing', async function () {
      await importDoc(doc());
      const before = await lookup('acme', 'TENT-2P');
      await sql`delete from product_lookups where ${answerOf('TENT-2P')}`.execute(db);
      await sql`update product_lookups set lookup = json_set(lookup, '$.product.title', 'Kept') where ${answerOf('abc-1')}`.execute(db);
      await forgetMigration();
      // 0003 runs again over columns that exist, as after a failure part-way.
      expect(await migrateToLatest(db)).to.deep.equal(MIGRATED);
      expect(await lookup('acme', 'TENT-2P')).to.deep.equal(before);
      expect((await lookup('acme', 'abc-1')).product.title).to.equal('Kept');
    });

    it('fails a lookup of a product without an answer instead of answering wrongly', async function () {
      await importDoc(doc());
      await sql`delete from product_lookups where ${answerOf('TENT-2P')}`.execute(db);
      let failure: unknown;
      try {
        await lookup('acme', 'TENT-2P');
      } catch (error) {
        failure = error;
      }
      expect(failure).to.be.instanceOf(Error);
    });
  });

  describe('thumbnails and upload dates', function () {
    const searchable = (): Doc => searchableFixtureDocument() as Doc;
    const pitchOf = async () => (await lookup('acme', 'TENT-2P')).product.pdp_urls[0]?.json_ld;

    it('stores both fields and serves the entries of a video that has both with the search-engine keys', async function () {
      await importDoc(searchable());
      const stored = await db.selectFrom('videos').select(['ref', 'thumbnail_url', 'upload_date']).orderBy('ref').execute();
      expect(stored.filter((v) => v.thumbnail_url !== null || v.upload_date !== null)).to.deep.equal([
        { ref: 'globex-demo', thumbnail_url: 'https://img.example/thumbs/globex-demo.jpg', upload_date: '2026-03-14T09:00:00+01:00' },
        { ref: 'tent-pack', thumbnail_url: 'https://img.example/thumbs/tent-pack.jpg', upload_date: null },
        { ref: 'tent-pitch', thumbnail_url: 'https://img.example/thumbs/tent-pitch.jpg', upload_date: '2026-03-14' },
      ]);
      expect(await pitchOf()).to.include({ thumbnailUrl: 'https://img.example/thumbs/tent-pitch.jpg', uploadDate: '2026-03-14', duration: 'PT1M33S' });
    });

    it('regenerates the entries of a video whose upload date alone changed, and the next lookup shows it', async function () {
      await importDoc(searchable());
      const before = await lookup('acme', 'TENT-2P');
      const changed = searchable();
      tent(changed).videos[0].upload_date = '2026-04-01T10:30:00-04:00';
      const report = await importDoc(changed);
      expect(report.videos).to.deep.equal({ created: 0, updated: 1, unchanged: 4, deleted: 0 });
      // p/123 and p/126 use tent-pitch; p/126 has no file URL, so its JSON-LD stays null: rewritten, not regenerated.
      expect(report.pdp_entries).to.deep.equal({ created: 0, updated: 2, unchanged: 5, deleted: 0, regenerated: 1 });
      const after = await lookup('acme', 'TENT-2P');
      expect(after.product.pdp_urls[0]?.json_ld?.uploadDate).to.equal('2026-04-01T10:30:00-04:00');
      expect(after.product.pdp_urls.slice(1)).to.deep.equal(before.product.pdp_urls.slice(1));
      expect((await importDoc(changed)).pdp_entries).to.include({ updated: 0, regenerated: 0 });
    });

    it('regenerates on a changed thumbnail, and goes back to the specification\'s object when a field is taken away', async function () {
      await importDoc(doc());
      const plain = await pitchOf();
      await importDoc(searchable());
      const thumbnailChanged = searchable();
      tent(thumbnailChanged).videos[0].thumbnail_url = 'https://img.example/thumbs/tent-pitch-2.jpg';
      expect((await importDoc(thumbnailChanged)).pdp_entries.regenerated).to.equal(1);
      expect((await pitchOf())?.thumbnailUrl).to.equal('https://img.example/thumbs/tent-pitch-2.jpg');
      const dateRemoved = searchable();
      tent(dateRemoved).videos[0].upload_date = null;
      expect((await importDoc(dateRemoved)).pdp_entries.regenerated).to.equal(1);
      expect(JSON.stringify(await pitchOf())).to.equal(JSON.stringify(plain));
    });

    it('leaves a catalog imported before the columns existed untouched by migrating and re-importing it', async function () {
      await importDoc(doc());
      const answers = () => db.selectFrom('product_lookups').select(['product_id', 'lookup_hash', 'lookup']).orderBy('product_id').execute();
      const before = await answers();
      await sql`alter table videos drop column thumbnail_url, drop column upload_date`.execute(db);
      await sql`delete from kysely_migration where name = '0003_video_search_fields'`.execute(db);
      expect(await migrateToLatest(db)).to.deep.equal(['0003_video_search_fields']);
      expect(await answers()).to.deep.equal(before);
      const report = await importDoc(doc());
      expect(report.videos).to.deep.equal({ created: 0, updated: 0, unchanged: 5, deleted: 0 });
      expect(report.pdp_entries).to.deep.equal({ created: 0, updated: 0, unchanged: 7, deleted: 0, regenerated: 0 });
      expect(await answers()).to.deep.equal(before);
    });
  });

  describe('API keys', function () {
    it('stores only hashes: no column of any key row holds a plaintext key', async function () {
      await importDoc(doc());
      const rows = await sql<Record<string, unknown>>`select * from api_keys`.execute(db);
      expect(rows.rows).to.have.length(4);
      const dump = JSON.stringify(rows.rows);
      expect(dump).to.not.include('pcat_live_');
      for (const key of Object.values(KEYS)) expect(dump).to.not.include(key.slice(10));
    });

    it('never brings back a revoked key on re-import, and revokes file keys the file dropped', async function () {
      await importDoc(doc());
      const store = new MysqlApiKeyStore(db);
      await db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', 'acme-prod').execute();
      const dropped = doc();
      dropped.partners[0].api_keys = dropped.partners[0].api_keys.filter((k: any) => k.id !== 'acme-staging');
      const report = await importDoc(dropped);
      expect(report.api_keys).to.deep.equal({ created: 0, updated: 0, unchanged: 3, revoked: 1 });
      expect(await store.findActiveByHash(hashApiKey(KEYS.acme))).to.equal(null);
      expect(await store.findActiveByHash(hashApiKey(KEYS.acmeSecond))).to.equal(null);
      expect(await store.findActiveByHash(hashApiKey(KEYS.globex))).to.deep.equal({ keyId: 'globex-prod', partnerId: 'globex' });
    });

    it('leaves keys issued by the CLI alone on re-import', async function () {
      await importDoc(doc());
      await db.insertInto('api_keys').values({ id: 'cli-key', partner_id: 'acme', sha256: hashApiKey(KEYS.unknown), label: null, origin: 'cli', revoked_at: null }).execute();
      await importDoc(doc());
      expect(await new MysqlApiKeyStore(db).findActiveByHash(hashApiKey(KEYS.unknown))).to.deep.equal({ keyId: 'cli-key', partnerId: 'acme' });
    });
  });
});

describe('MySQL video rows', function () {
  it('hash a video without thumbnail and upload date as before those columns existed, so upgrading rewrites nothing', function () {
    // Computed by the import as it was before the columns were added.
    const before: Record<string, string> = {
      'tent-pitch': '62a519a95af24537ebc8df8baf0cf5088ecb15e2a8019c319508c15527ff12fa',
      'tent-draft': '63cdcbf63d9c39f1d366678a3b6617f416d20614974cbb8c09d3e271c4c07ec7',
      'tent-fold': '1aa63231188d5f131c10809dd072fa0854fecf4398c556bef4f25fc6e2d33463',
      'tent-pack': '2f63261d0476c13792b2f60fcf4c0275b34a81d0b193333188e6ee28aa9357ea',
    };
    const videos = fixtureCatalog().partners[0]!.products[0]!.videos;
    expect(Object.fromEntries(videos.map((v) => [v.ref, videoRow('acme', 1, 0, v).content_hash]))).to.deep.equal(before);
    const withThumbnail = videoRow('acme', 1, 0, { ...videos[0]!, thumbnailUrl: 'https://img.example/t.jpg' }).content_hash;
    const withDate = videoRow('acme', 1, 0, { ...videos[0]!, uploadDate: '2026-03-14' }).content_hash;
    expect(new Set([before['tent-pitch'], withThumbnail, withDate]).size).to.equal(3);
  });
});

describe('MySQL imports into two databases of one server', function () {
  const first = useTestDatabase();
  const second = useTestDatabase();
  this.timeout(30_000);

  it('do not wait for each other: an import into one runs while the other\'s import lock is held', async function () {
    await first.db.connection().execute(async (holder) => {
      const { rows } = await sql<{ acquired: number }>`select get_lock(${IMPORT_LOCK}, 0) as acquired`.execute(holder);
      expect(rows[0]!.acquired).to.equal(1);
      try {
        // The name held is the one the first database's imports take: another of its sessions finds it in use.
        const inUse = await sql<{ holder: number | null }>`select is_used_lock(${IMPORT_LOCK}) as holder`.execute(first.db);
        expect(inUse.rows[0]!.holder).to.not.equal(null);
        const report = await importCatalog(second.db, fixtureCatalog());
        expect(report.products.created).to.equal(7);
      } finally {
        await sql`select release_lock(${IMPORT_LOCK})`.execute(holder);
      }
    });
  });
});
