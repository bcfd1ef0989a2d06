import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { IMPORT_LOCK, MysqlCatalogStore } from '../../src/adapters/mysql/mysql-catalog-store.js';
import { feedPageQuery, MysqlChangesFeed } from '../../src/adapters/mysql/mysql-changes-feed.js';
import { catalogImportContract, manyPartnersDocument } from '../contracts/catalog-import.contract.js';
import { importCatalog, importDocument } from '../support/import.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { migrationProvider } from '../../src/adapters/mysql/migrations.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import { parseCatalogSource, piecesOfDocument, type CatalogPiece } from '../../src/domain/catalog-source.js';
import { ImportCatalog } from '../../src/application/catalog-import/import-catalog.js';
import type { CatalogImportSession, CatalogStore } from '../../src/application/catalog-import/catalog-store.js';
import { systemClock } from '../../src/application/common/clock.js';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import { toLookupResult, type LookupResult } from '../../src/domain/lookup-result.js';
import type { Sku } from '../../src/domain/sku.js';
import { videoHash } from '../../src/domain/content-hashes.js';
import { etagOf, lookupBody } from '../../src/domain/lookup-body.js';
import { migrateTo, writeLegacyCatalog } from '../support/legacy-database.js';
import { fixtureCatalog, fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { useTestDatabase } from '../support/mariadb.js';
import { statementsRun, statementTexts } from '../support/mysql-statements.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import { demoProducts } from '../../src/adapters/catalog-file/catalog-file.js';

type Doc = ReturnType<typeof fixtureDocument> & { partners: any[] };

const doc = (): Doc => fixtureDocument() as Doc;

/** Every migration from `first` on, in order: what bringing a database stopped before `first` up to date applies. */
async function migrationsFrom(first: string): Promise<string[]> {
  const names = Object.keys(await migrationProvider.getMigrations()).sort();
  return names.slice(names.indexOf(first));
}

catalogImportContract('mysql', () => {
  const testDb = useTestDatabase();
  return {
    fresh: async () => {
      const { db } = testDb;
      for (const table of ['api_keys', 'product_tombstones', 'pdp_entries', 'videos', 'products', 'partners'] as const) await db.deleteFrom(table).execute();
      // Emptied tables number from 1 again, so both storages give one file the same IDs.
      for (const table of ['products', 'videos', 'pdp_entries']) await sql`alter table ${sql.table(table)} auto_increment = 1`.execute(db);
      return {
        store: new MysqlCatalogStore(db),
        catalog: new MysqlProductCatalog(db),
        feed: new MysqlChangesFeed(db),
        keys: new MysqlApiKeyStore(db),
        issueKey: async (keyId, partnerId, sha256) => {
          await db.insertInto('api_keys').values({ id: keyId, partner_id: partnerId, sha256, label: null, origin: 'cli', revoked_at: null }).execute();
        },
        revokeKey: async (keyId) => {
          await db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', keyId).execute();
        },
      };
    },
  };
});

describe('MySQL import', function () {
  const testDb = useTestDatabase();
  let db: Kysely<Database>;
  let catalog: MysqlProductCatalog;

  const lookup = async (partnerId: string, sku: string): Promise<LookupResult> => {
    const found = await catalog.findBySku(partnerId, sku as Sku);
    if (found === null) throw new Error(`${partnerId}/${sku} not found`);
    return found.result;
  };
  const importDoc = (d: Doc) => importCatalog(db, parseCatalogSource(d));
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

  describe('a database imported before answers were stored', function () {
    const legacy = useTestDatabase({ migrated: false });
    const answerOf = (sku: string) => sql`product_lookups.product_id = (select id from products where partner_id = 'acme' and sku = ${sku})`;
    const legacyLookup = (sku: string) => new MysqlProductCatalog(legacy.db).findBySku('acme', sku as Sku).then((answer) => answer?.result ?? null);

    it('gets every answer built by the migrations, keeps every hash, and has its answers rewritten by the next import', async function () {
      await writeLegacyCatalog(legacy.db, fixtureCatalog());
      expect(await migrateToLatest(legacy.db)).to.deep.equal(await migrationsFrom('0002_product_lookup_document'));
      const expected = (await legacyLookup('TENT-2P'))!;
      expect(expected.product.pdp_urls[0]?.json_ld?.transcript).to.equal('Transcript of tent-pitch.');
      // An answer the migration built is rewritten from the file by the next import, even with no change in it.
      await sql`update product_lookups set lookup = json_set(lookup, '$.product.title', 'Stale') where ${answerOf('TENT-2P')}`.execute(legacy.db);
      const report = await importCatalog(legacy.db, fixtureCatalog());
      // The hashes the old import stored are the ones computed now: nothing is rewritten but the answers.
      expect(report.products).to.deep.equal({ created: 0, updated: 0, unchanged: 7, deleted: 0 });
      expect(report.videos).to.deep.equal({ created: 0, updated: 0, unchanged: 5, deleted: 0 });
      expect(report.pdp_entries).to.deep.equal({ created: 0, updated: 0, unchanged: 7, deleted: 0, regenerated: 0 });
      expect(await legacyLookup('TENT-2P')).to.deep.equal(expected);
      const source = fixtureCatalog().partners[0]!.products[0]!;
      expect(expected).to.deep.equal(toLookupResult(source, { product: 1, videos: [1, 2, 3, 4], pdpUrls: [1, 2, 3, 4, 5, 6] }, 'Acme Outdoor Co.'));
    });

    it('runs migration 0002 again after it stopped part-way, filling only what is missing', async function () {
      await writeLegacyCatalog(legacy.db, fixtureCatalog());
      await migrateTo(legacy.db, '0002_product_lookup_document');
      // Read as 0002 left it: the catalog's statement reads the ETag column a later migration adds.
      const { rows: [stored] } = await sql<{ lookup: string }>`select lookup from product_lookups where ${answerOf('TENT-2P')}`.execute(legacy.db);
      const before = typeof stored!.lookup === 'string' ? JSON.parse(stored!.lookup) as unknown : stored!.lookup;
      await sql`delete from product_lookups where ${answerOf('TENT-2P')}`.execute(legacy.db);
      await sql`update product_lookups set lookup = json_set(lookup, '$.product.title', 'Kept') where ${answerOf('abc-1')}`.execute(legacy.db);
      await sql`delete from kysely_migration where name = '0002_product_lookup_document'`.execute(legacy.db);
      expect(await migrateToLatest(legacy.db)).to.deep.equal(await migrationsFrom('0002_product_lookup_document'));
      expect(await legacyLookup('TENT-2P')).to.deep.equal(before);
      expect((await legacyLookup('abc-1'))?.product.title).to.equal('Kept');
    });

    it('runs migrations 0004 and 0005 again after they stopped part-way', async function () {
      await writeLegacyCatalog(legacy.db, fixtureCatalog());
      await migrateTo(legacy.db, '0005_changes_feed');
      await sql`delete from kysely_migration where name in ('0004_identities_and_hashes_only', '0005_changes_feed')`.execute(legacy.db);
      expect(await migrateToLatest(legacy.db)).to.deep.equal(await migrationsFrom('0004_identities_and_hashes_only'));
      const feed = await new MysqlChangesFeed(legacy.db).read('acme', 0, 100);
      expect(feed.entries.map((e) => e.sku)).to.deep.equal(fixtureCatalog().partners[0]!.products.map((p) => p.sku));
    });

    it('moves the feed onto the stored answers (0007): every position and tombstone kept, and again after a stop part-way', async function () {
      await writeLegacyCatalog(legacy.db, fixtureCatalog());
      await migrateTo(legacy.db, '0005_changes_feed');
      // As 0005 left it after an import that deleted one product and changed another.
      await sql`insert into product_changes (partner_id, sku, seq, product_id, deleted, etag, changed_at)
        values ('acme', 'GONE-1', 20, 99, true, null, '2026-11-01 10:00:00.000')`.execute(legacy.db);
      await sql`update product_changes set seq = 21, changed_at = '2026-11-02 10:00:00.000' where partner_id = 'acme' and sku = 'abc-1'`.execute(legacy.db);
      await sql`update partners set feed_seq = 21 where id = 'acme'`.execute(legacy.db);
      const before = await sql<{ sku: string; seq: number; deleted: number }>`select sku, seq, deleted from product_changes where partner_id = 'acme' order by seq`.execute(legacy.db);
      expect(await migrateToLatest(legacy.db)).to.deep.equal(await migrationsFrom('0006_partner_portal'));
      const entries = async () => (await new MysqlChangesFeed(legacy.db).read('acme', 0, 100)).entries.map((e) => ({ sku: e.sku, seq: e.seq, deleted: e.change === 'deleted' ? 1 : 0 }));
      expect(await entries()).to.deep.equal(before.rows);
      expect((await entries()).at(-1)).to.deep.equal({ sku: 'abc-1', seq: 21, deleted: 0 });
      // Stopped in 0007: it and every later migration are still to run.
      await sql`delete from kysely_migration where name >= '0007_feed_on_answers'`.execute(legacy.db);
      expect(await migrateToLatest(legacy.db)).to.deep.equal(await migrationsFrom('0007_feed_on_answers'));
      expect(await entries()).to.deep.equal(before.rows);
      // The next import goes on from the partner's position.
      await importCatalog(legacy.db, fixtureCatalog());
      expect((await new MysqlChangesFeed(legacy.db).read('acme', 21, 100)).entries.map((e) => e.seq).every((seq) => seq > 21)).to.equal(true);
    });
  });

  it('stores beside each answer the ETag a lookup of it sends, and a new one when the answer changes', async function () {
    const etags = async () => new Map((await db.selectFrom('product_lookups').innerJoin('products', 'products.id', 'product_lookups.product_id')
      .select(['products.sku', 'products.partner_id', 'product_lookups.etag']).execute()).map((row) => [`${row.partner_id}/${row.sku}`, row.etag]));
    await importDoc(doc());
    const before = await etags();
    // The file's 7 products, and each partner's sandbox: the 4 demo products, as neither partner has a sandbox section.
    const demoSkus = (await demoProducts()).map((product) => product.sku);
    expect([...before.keys()].sort()).to.deep.equal([
      ...fixtureCatalog().partners.flatMap((partner) => partner.products.map((product) => `${partner.id}/${product.sku}`)),
      ...demoSkus.flatMap((sku) => [`~acme/${sku}`, `~globex/${sku}`]),
    ].sort());
    for (const [key, etag] of before) {
      const [partnerId, sku] = key.split('/') as [string, string];
      expect(etag).to.equal(etagOf(lookupBody(await lookup(partnerId, sku))));
    }
    const changed = doc();
    (changed.partners[0].products as { sku: string; title: string }[]).find((p) => p.sku === 'TENT-2P')!.title = 'Renamed';
    await importDoc(changed);
    const after = await etags();
    expect(after.get('acme/TENT-2P')).to.not.equal(before.get('acme/TENT-2P'));
    expect(after.get('acme/TENT-2P')).to.equal(etagOf(lookupBody(await lookup('acme', 'TENT-2P'))));
    expect(after.get('acme/abc-1')).to.equal(before.get('acme/abc-1'));
  });

  it('reads a feed page from the two position indexes alone, never the stored answers', async function () {
    await importDoc(doc());
    const { rows } = await sql<{ table: string; key: string | null; Extra: string | null }>`explain ${feedPageQuery('acme', 0, 100)}`.execute(db);
    const plan = (table: string) => rows.find((row) => row.table === table);
    expect(plan('product_lookups')?.key).to.equal('product_lookups_position');
    // Index-only: the answers, kilobytes each, stay on disk.
    expect(plan('product_lookups')?.Extra).to.match(/Using index/);
    expect(plan('product_tombstones')?.key).to.equal('product_tombstones_position');
    expect(plan('products')?.key).to.equal('PRIMARY');
  });

  it('never lets a feed read running while an import commits skip a change', async function () {
    this.timeout(60_000);
    const template = (fixtureDocument() as Doc).partners[0].products[2] as Record<string, unknown>;
    const catalogOf = (title: string) => ({
      format: 'partner-catalog/v1',
      partners: [{ id: 'big', name: 'Big', products: Array.from({ length: 3_000 }, (_, i) => ({ ...template, sku: `P-${i}`, title: `${title} ${i}` })) }],
    });
    const store = new MysqlCatalogStore(db);
    const feed = new MysqlChangesFeed(db);
    await importDocument(store, catalogOf('First'));
    const seen = new Map<string, string | null>();
    let cursor = 0;
    let reads = 0;
    const follow = async (): Promise<void> => {
      for (;;) {
        const { entries } = await feed.read('big', cursor, 100);
        reads += 1;
        for (const entry of entries) seen.set(entry.sku, entry.etag);
        if (entries.length === 0) return;
        cursor = entries.at(-1)!.seq;
      }
    };
    const state = { importing: true };
    const second = importDocument(store, catalogOf('Second')).finally(() => (state.importing = false));
    while (state.importing) await follow();
    await second;
    await follow();
    expect(reads).to.be.above(3);
    for (let i = 0; i < 3_000; i += 1) {
      const answer = await lookup('big', `P-${i}`);
      expect(answer.product.title).to.equal(`Second ${i}`);
      expect(seen.get(`P-${i}`), `P-${i}`).to.equal(etagOf(lookupBody(answer)));
    }
  });

  it('keeps nothing when reading the file fails while a batch is being written', async function () {
    const template = (fixtureDocument() as Doc).partners[0].products[2] as Record<string, unknown>;
    const document = { format: 'partner-catalog/v1', partners: [{ id: 'big', name: 'Big', products: Array.from({ length: 1_000 }, (_, i) => ({ ...template, sku: `P-${i}` })) }] };
    const mysql = new MysqlCatalogStore(db);
    // The first batch's first statement waits until reading the file has failed: the batch is still being written then.
    let writing = (): void => undefined;
    const written = new Promise<void>((resolve) => (writing = resolve));
    let failed = (): void => undefined;
    const failure = new Promise<void>((resolve) => (failed = resolve));
    const store: CatalogStore = {
      importing: (work) => mysql.importing((session) => work(new Proxy(session, {
        get: (target, name: keyof CatalogImportSession) => (name !== 'products' ? target[name].bind(target) : async (...args: Parameters<CatalogImportSession['products']>) => {
          writing();
          await failure;
          return target.products(...args);
        }),
      }))),
    };
    async function* pieces(): AsyncGenerator<readonly CatalogPiece[]> {
      for (const piece of piecesOfDocument(document)) {
        if (piece.kind === 'product' && piece.index === 700) {
          await written;
          failed();
          throw new Error('the disk is gone');
        }
        yield [piece];
      }
    }
    const outcome = await new ImportCatalog(store, systemClock, processCursorKeys(), demoProducts).execute(pieces()).catch((error: unknown) => error);
    expect(outcome).to.be.instanceOf(Error).with.property('message', 'the disk is gone');
    for (const table of ['partners', 'products', 'videos', 'pdp_entries', 'product_lookups'] as const) {
      const { n } = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      expect(Number(n), table).to.equal(0);
    }
  });

  it('fails a lookup of a product without an answer instead of answering wrongly', async function () {
    await importDoc(doc());
    await sql`delete from product_lookups where product_id = (select id from products where partner_id = 'acme' and sku = 'TENT-2P')`.execute(db);
    let failure: unknown;
    try {
      await lookup('acme', 'TENT-2P');
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(Error);
  });

  describe('statements of an import of many partners, counted on the wire', function () {
    let proxy: TcpProxy | undefined;
    let watched: Kysely<Database> | undefined;
    beforeEach(async function () {
      const target = new URL(testDb.url);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
      const url = new URL(testDb.url);
      url.port = String(proxy.port);
      watched = createMysqlDatabase(url.toString());
    });
    afterEach(async function () {
      await watched?.destroy();
      await proxy?.close();
    });

    /** The statements an import through the proxy sends: their texts, and the prepared ones' runs (each an upsert, in an import). */
    const sent = async (d: unknown): Promise<{ texts: string[]; prepared: number }> => {
      const [texts, prepared] = [statementTexts(proxy!).length, statementsRun(proxy!)];
      await importDocument(new MysqlCatalogStore(watched!), d);
      return { texts: statementTexts(proxy!).slice(texts), prepared: statementsRun(proxy!) - prepared };
    };
    const writes = (texts: readonly string[]): string[] => texts.filter((text) => /^\s*(insert|update|delete|replace)\b/i.test(text));

    it('sends no write for a file of 50 partners it already holds, and a handful of statements whatever the partners', async function () {
      await importDocument(new MysqlCatalogStore(db), manyPartnersDocument(50));
      const again = await sent(manyPartnersDocument(50));
      expect(writes(again.texts)).to.deep.equal([]);
      expect(again.prepared).to.equal(0);
      // The lock, the transaction, the stored catalogs of the 100 partners and sandboxes, the keys.
      expect(again.texts.length, again.texts.join('\n')).to.be.at.most(10);
    });

    it('costs at most twice a one-partner file\'s statements to change one product in a file of 50 partners', async function () {
      const many = manyPartnersDocument(50);
      await importDocument(new MysqlCatalogStore(db), many);
      many.partners[20].products[1].title = 'Changed once';
      const whole = await sent(many);
      const alone = { format: many.format, partners: [structuredClone(many.partners[20])] };
      alone.partners[0].products[2].title = 'Changed twice';
      const onePartner = await sent(alone);
      const statements = ({ texts, prepared }: { texts: string[]; prepared: number }): number => texts.length + prepared;
      expect(statements(whole), whole.texts.join('\n')).to.be.at.most(2 * statements(onePartner));
      // Every write sent as text is of the changed partner (its feed position, its source hash): none of another partner or a sandbox.
      expect(writes(whole.texts)).to.have.length.above(0);
      expect(writes(whole.texts).filter((text) => !text.includes("'p-20'"))).to.deep.equal([]);
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

  });
});

describe('Video content hashes', function () {
  it('hash a video without thumbnail and upload date as before those columns existed, so upgrading rewrites nothing', function () {
    // Computed by the import as it was before the columns were added.
    const before: Record<string, string> = {
      'tent-pitch': '62a519a95af24537ebc8df8baf0cf5088ecb15e2a8019c319508c15527ff12fa',
      'tent-draft': '63cdcbf63d9c39f1d366678a3b6617f416d20614974cbb8c09d3e271c4c07ec7',
      'tent-fold': '1aa63231188d5f131c10809dd072fa0854fecf4398c556bef4f25fc6e2d33463',
      'tent-pack': '2f63261d0476c13792b2f60fcf4c0275b34a81d0b193333188e6ee28aa9357ea',
    };
    const videos = fixtureCatalog().partners[0]!.products[0]!.videos;
    expect(Object.fromEntries(videos.map((v) => [v.ref, videoHash('acme', 1, 0, v)]))).to.deep.equal(before);
    const withThumbnail = videoHash('acme', 1, 0, { ...videos[0]!, thumbnailUrl: 'https://img.example/t.jpg' });
    const withDate = videoHash('acme', 1, 0, { ...videos[0]!, uploadDate: '2026-03-14' });
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
