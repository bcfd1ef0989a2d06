import { expect } from 'chai';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { CURSOR_SECRET_NAME, MysqlCursorKeys } from '../../src/adapters/mysql/mysql-cursor-keys.js';
import { openMysqlStorage } from '../../src/adapters/mysql/mysql-storage.js';
import type { Clock } from '../../src/application/common/clock.js';
import type { CursorKeys } from '../../src/application/changes/cursor-keys.js';
import { decodeCursor, encodeCursor } from '../../src/domain/changes.js';
import { useTestDatabase } from '../support/mariadb.js';

const CONFIGURED = 'a-configured-cursor-secret-of-40-characters';
const AT = Date.parse('2026-12-01T10:00:00.000Z');
const clockAt = (ms: number): Clock => ({ now: () => ms });

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

  it('gives one key for the life of the process, of 32 random bytes, signing since the deployment began', async function () {
    const source = keys.open({ clock: clockAt(AT) });
    const [first, second] = [await source.cursorKey(), await source.cursorKey()];
    expect(second).to.equal(first);
    expect(first.secret).to.have.length(32);
    expect(first.signingSince.getTime()).to.equal(AT);
  });

  it('signs with CURSOR_SECRET when set', async function () {
    const key = await keys.open({ secret: CONFIGURED, clock: clockAt(AT) }).cursorKey();
    expect(key.secret.toString('utf8')).to.equal(CONFIGURED);
    expect(key.signingSince.getTime()).to.equal(AT);
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
      const read = await Promise.all(instances.map((instance) => instance.cursorKeys.cursorKey()));
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
      await source.cursorKey().catch((error: unknown) => {
        refused = error;
      });
      expect(refused).to.be.instanceOf(Error);
      await migrateToLatest(unmigrated.db);
      expect((await source.cursorKey()).signingSince.getTime()).to.equal(AT);
    });
  });
});
