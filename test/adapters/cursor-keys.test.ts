import { expect } from 'chai';
import { sql } from 'kysely';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { MysqlCatalogStore } from '../../src/adapters/mysql/mysql-catalog-store.js';
import { CURSOR_SECRET_NAME, MysqlCursorKeys } from '../../src/adapters/mysql/mysql-cursor-keys.js';
import { openMysqlStorage } from '../../src/adapters/mysql/mysql-storage.js';
import { ImportCatalog } from '../../src/application/catalog-import/import-catalog.js';
import type { Clock } from '../../src/application/common/clock.js';
import type { CursorKeys } from '../../src/application/changes/cursor-keys.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { piecesOfDocument } from '../../src/domain/catalog-source.js';
import { decodeCursor, encodeCursor } from '../../src/domain/changes.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { catalogDocument, importCatalog } from '../support/import.js';
import { emptyDatabase, importBeforeTestKeys, migrateTo } from '../support/legacy-database.js';
import { migrationsFrom } from '../support/migrations.js';
import { useTestDatabase } from '../support/mariadb.js';
import { demoProducts } from '../../src/adapters/catalog-file/catalog-file.js';

const CONFIGURED = 'a-configured-cursor-secret-of-40-characters';
const AT = Date.parse('2026-12-01T10:00:00.000Z');
const clockAt = (ms: number): Clock => ({ now: () => ms });
const DAY_MS = 24 * 60 * 60 * 1000;

/** The fixture's partners named, alone. */
const partnersOf = (...ids: string[]): Catalog => ({ partners: fixtureCatalog().partners.filter((partner) => ids.includes(partner.id)) });

/** The cursor keys of one adapter, over a deployment that has signed nothing yet. */
interface Adapter {
  readonly name: string;
  setup(): { open(options: { secret?: string; clock: Clock }): CursorKeys };
}

const ADAPTERS: Adapter[] = [
  { name: 'memory', setup: () => ({ open: (options) => processCursorKeys(options) }) },
  {
    name: 'MySQL',
    setup: () => {
      const testDb = useTestDatabase();
      beforeEach(async function () {
        await testDb.db.deleteFrom('service_secrets').execute();
      });
      return { open: (options) => new MysqlCursorKeys(testDb.db, options) };
    },
  },
];

for (const adapter of ADAPTERS) describe(`cursor keys on ${adapter.name}`, function () {
  const keys = adapter.setup();

  it('gives one key for the life of the process, of 32 random bytes, signing since the deployment began, and at once once had', async function () {
    const source = keys.open({ clock: clockAt(AT) });
    const [first, second] = [await source.cursorKey(), await source.cursorKey()];
    expect(second).to.equal(first);
    expect(source.cursorKey(), 'the key had, given without a promise').to.equal(first);
    expect(first.secret).to.have.length(32);
    expect(first.signingSince.getTime()).to.equal(AT);
  });

  it('signs with CURSOR_SECRET when set', async function () {
    const key = await keys.open({ secret: CONFIGURED, clock: clockAt(AT) }).cursorKey();
    expect(key.secret.toString('utf8')).to.equal(CONFIGURED);
    expect(key.signingSince.getTime()).to.equal(AT);
  });

  it('takes an unsigned cursor from no partner: this deployment never served its feed unsigned', async function () {
    expect([...(await keys.open({ clock: clockAt(AT) }).cursorKey()).unsignedIssuedTo]).to.deep.equal([]);
  });
});

describe('cursor keys on MySQL, for a deployment made after signing came', function () {
  const testDb = useTestDatabase();

  it('takes an unsigned cursor from no partner, though its feed holds every product imported since', async function () {
    await testDb.db.deleteFrom('service_secrets').execute();
    // As `import` does on a new deployment: the key first, then the feed.
    await importCatalog(testDb.db, fixtureCatalog());
    expect(await testDb.db.selectFrom('product_lookups').select('product_id').execute()).to.not.deep.equal([]);
    expect([...(await new MysqlCursorKeys(testDb.db, { clock: clockAt(AT) }).cursorKey()).unsignedIssuedTo]).to.deep.equal([]);
  });
});

describe('cursor keys on MySQL: the partners served unsigned before signing began (migration 0012)', function () {
  const testDb = useTestDatabase();
  /** Imports as a version of its time did, at `ms`, into the schema of its time: the feed written, and no cursor key made. */
  const importBefore = (ms: number, catalog: Catalog) => importBeforeTestKeys(new MysqlCatalogStore(testDb.db), catalogDocument(catalog), { clock: clockAt(ms) });
  /** Imports as this version does, at `ms`, with the cursor key left to the first feed read. */
  const importAt = (ms: number, catalog: Catalog) =>
    new ImportCatalog(new MysqlCatalogStore(testDb.db), clockAt(ms), processCursorKeys(), demoProducts).execute(piecesOfDocument(catalogDocument(catalog)));
  const unsignedIssuedTo = async (): Promise<string[]> => [...(await new MysqlCursorKeys(testDb.db, { clock: clockAt(AT) }).cursorKey()).unsignedIssuedTo].sort();

  beforeEach(async function () {
    await emptyDatabase(testDb.db);
    await migrateTo(testDb.db, '0011_webhook_outbox');
  });

  it('a deployment that served its feed unsigned and signs from this version on: every partner with a feed then, none added after', async function () {
    await importBefore(AT - DAY_MS, partnersOf('acme'));
    await migrateToLatest(testDb.db);
    // Globex and the partners' sandboxes come with this version: none of them was ever served unsigned.
    await importAt(AT, partnersOf('acme', 'globex'));
    expect(await unsignedIssuedTo()).to.deep.equal(['acme']);
    // Run again, as after a stop part-way, once the key is made: the same partners.
    // Kysely runs migrations in order only: the ones after 0012 are forgotten with it, and run again too.
    await sql`delete from kysely_migration where name >= '0012_feed_before_signing'`.execute(testDb.db);
    expect(await migrateToLatest(testDb.db)).to.deep.equal(await migrationsFrom('0012_feed_before_signing'));
    expect(await unsignedIssuedTo()).to.deep.equal(['acme']);
  });

  it('a deployment that began signing before this migration: the partners with a feed entry older than its key', async function () {
    await sql`insert into service_secrets (name, value, created_at) values (${CURSOR_SECRET_NAME}, ${'k'.repeat(43)}, ${new Date(AT)})`.execute(testDb.db);
    await importBefore(AT - DAY_MS, partnersOf('acme'));
    await importBefore(AT + 60_000, partnersOf('globex'));
    await migrateToLatest(testDb.db);
    expect(await unsignedIssuedTo()).to.deep.equal(['acme']);
  });

  it('a deployment made after signing came, whose every entry is newer than its key: none', async function () {
    await sql`insert into service_secrets (name, value, created_at) values (${CURSOR_SECRET_NAME}, ${'k'.repeat(43)}, ${new Date(AT)})`.execute(testDb.db);
    await importBefore(AT + 60_000, partnersOf('acme', 'globex'));
    await migrateToLatest(testDb.db);
    expect(await unsignedIssuedTo()).to.deep.equal([]);
  });
});

describe('cursor keys on MySQL, across instances', function () {
  const testDb = useTestDatabase();
  beforeEach(async function () {
    await testDb.db.deleteFrom('service_secrets').execute();
  });

  it('gives every instance of a deployment the same key, made once by whichever asked first, with nothing configured', async function () {
    const instances = await Promise.all(Array.from({ length: 5 }, () => openMysqlStorage({ url: testDb.url })));
    try {
      // Started together, as instances behind one load balancer are, each on its own pool.
      const read = await Promise.all(instances.map((instance) => Promise.resolve(instance.cursorKeys.cursorKey())));
      for (const key of read) {
        expect(key.secret.equals(read[0]!.secret)).to.equal(true);
        expect(key.signingSince.getTime()).to.equal(read[0]!.signingSince.getTime());
      }
      // A cursor one instance issues, another takes.
      const cursor = encodeCursor(read[0]!, 'acme', 1234);
      expect(decodeCursor(read[4]!, 'acme', cursor, Date.now())).to.equal(1234);
      expect(await testDb.db.selectFrom('service_secrets').select('name').execute()).to.deep.equal([{ name: CURSOR_SECRET_NAME }]);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
  });

  it('keeps the key and the time signing began across restarts; CURSOR_SECRET signs in its place and keeps that time', async function () {
    const before = await new MysqlCursorKeys(testDb.db, { clock: clockAt(AT) }).cursorKey();
    const later = await new MysqlCursorKeys(testDb.db, { clock: clockAt(AT + 86_400_000) }).cursorKey();
    expect(later.secret.equals(before.secret)).to.equal(true);
    expect(later.signingSince.getTime()).to.equal(AT);
    const configured = await new MysqlCursorKeys(testDb.db, { secret: CONFIGURED, clock: clockAt(AT + 2 * 86_400_000) }).cursorKey();
    expect(configured.secret.toString('utf8')).to.equal(CONFIGURED);
    expect(configured.signingSince.getTime()).to.equal(AT);
  });

  describe('a database not migrated yet', function () {
    const unmigrated = useTestDatabase({ migrated: false });

    it('fails to give a key, and gives it once the database can', async function () {
      const source = new MysqlCursorKeys(unmigrated.db, { clock: clockAt(AT) });
      let refused: unknown;
      await Promise.resolve(source.cursorKey()).catch((error: unknown) => {
        refused = error;
      });
      expect(refused).to.be.instanceOf(Error);
      await migrateToLatest(unmigrated.db);
      expect((await source.cursorKey()).signingSince.getTime()).to.equal(AT);
    });
  });
});
