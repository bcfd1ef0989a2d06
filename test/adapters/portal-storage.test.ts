import { expect } from 'chai';
import { sql } from 'kysely';
import { MemoryApiKeyAdmin } from '../../src/adapters/memory/memory-api-key-admin.js';
import { memoryAdminStore } from '../../src/adapters/memory/memory-admin-store.js';
import { MemorySignInAddressBudget } from '../../src/adapters/memory/memory-sign-in-address-budget.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { migrationsFrom } from '../support/migrations.js';
import { mysqlAdminStore } from '../../src/adapters/mysql/mysql-admin-store.js';
import { MysqlApiKeyAdmin } from '../../src/adapters/mysql/mysql-api-key-admin.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { PasswordHashGate } from '../../src/application/admin-sign-in/password-hash-gate.js';
import { PruneAdminRecords } from '../../src/application/admin-sign-in/prune-admin-records.js';
import { SignIn } from '../../src/application/admin-sign-in/sign-in.js';
import { AUDIT_RETENTION_MS, SIGN_IN_FAILURE_WINDOW_MS, SIGN_IN_LOCK_MS } from '../../src/domain/admin.js';
import { fixtureCatalog, fixtureDocument } from '../fixtures/catalog-fixture.js';
import { adminStoreContract } from '../contracts/admin-store.contract.js';
import { apiKeyAdminContract } from '../contracts/api-key-admin.contract.js';
import { importCatalog, importDocument } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { adminRefusal, ManualClock } from '../support/portal-world.js';

describe('the portal\'s storage', function () {
  describe('in memory', function () {
    apiKeyAdminContract('memory', async () => {
      const store = new MemoryCatalogStore();
      await importDocument(store, fixtureDocument());
      return { admin: new MemoryApiKeyAdmin(store), keys: store };
    });
    adminStoreContract('memory', () => Promise.resolve(memoryAdminStore()), { floodFailures: 52_500 });
  });

  describe('on MySQL', function () {
    const testDb = useTestDatabase();
    const PORTAL_TABLES = ['audit_events', 'admin_sign_in_locks', 'admin_sign_in_failures', 'admin_sessions', 'admin_invitations', 'partner_admins'] as const;
    const PRUNED_TABLES = ['admin_sign_in_failures', 'admin_sign_in_locks', 'audit_events'] as const;

    before(async function () {
      await importCatalog(testDb.db, fixtureCatalog());
    });
    /** The fixture's partners and keys, and nothing the last test added. */
    async function fresh(): Promise<void> {
      for (const table of PORTAL_TABLES) await testDb.db.deleteFrom(table).execute();
      await testDb.db.deleteFrom('api_keys').where('origin', '=', 'cli').execute();
      await sql`update api_keys set last_used_at = null`.execute(testDb.db);
    }

    apiKeyAdminContract('mysql', async () => {
      await fresh();
      return { admin: new MysqlApiKeyAdmin(testDb.db), keys: new MysqlApiKeyStore(testDb.db) };
    });
    adminStoreContract('mysql', async () => {
      await fresh();
      return mysqlAdminStore(testDb.db);
    }, { floodFailures: 5_000 });

    describe('retention', function () {
      const T = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
      const FLOOD_ROWS = 12_000;
      const rows = async (table: typeof PORTAL_TABLES[number]): Promise<number> =>
        Number((await testDb.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);

      beforeEach(fresh);

      it('prunes a flood\'s rows in batches, keeping what still counts', async function () {
        this.timeout(20_000);
        const { db } = testDb;
        // More rows than one batch deletes, as a flood of unknown emails left them before there was pruning.
        await sql`insert into admin_sign_in_failures (email, failed_at) select concat('flood-', seq, '@example.test'), ${T} from seq_1_to_${sql.lit(FLOOD_ROWS)}`.execute(db);
        await sql`insert into admin_sign_in_locks (email, locked_until) select concat('flood-', seq, '@example.test'), ${T} from seq_1_to_${sql.lit(FLOOD_ROWS)}`.execute(db);
        await sql`insert into audit_events (at, partner_id, admin_email, action) select ${T}, 'acme', 'ada@acme.example', 'admin.signed_in' from seq_1_to_${sql.lit(FLOOD_ROWS)}`.execute(db);
        const clock = new ManualClock(T.getTime() + AUDIT_RETENTION_MS + 1);
        const now = new Date(clock.now());
        const store = mysqlAdminStore(db);
        await store.throttle.recordFailure('eve@acme.example', now, new Date(clock.now() - SIGN_IN_FAILURE_WINDOW_MS));
        await store.throttle.lock('ada@acme.example', new Date(clock.now() + SIGN_IN_LOCK_MS));
        await store.audit.record({ at: now, partnerId: 'acme', adminEmail: 'ada@acme.example', action: 'key.created', keyId: 'acme-k1' });
        const before = await Promise.all(PRUNED_TABLES.map(rows));
        await new PruneAdminRecords(store.throttle, store.audit, clock).execute();
        const after = await Promise.all(PRUNED_TABLES.map(rows));
        process.stdout.write(`        ${PRUNED_TABLES.map((table, i) => `${table} ${before[i]!.toLocaleString('en')} -> ${after[i]}`).join(', ')}\n`);
        expect(after).to.deep.equal([1, 1, 1]);
      });

      it('prunes each table by its age index', async function () {
        const { db } = testDb;
        // Tables where the index matters (many rows that stay, few to prune), with statistics read now
        // and no deleted rows the purge has yet to clear (the last test's), which the optimizer would count.
        for (const table of ['admin_sign_in_failures', 'admin_sign_in_locks', 'audit_events']) await sql`truncate table ${sql.table(table)}`.execute(db);
        const later = new Date(T.getTime() + 86_400_000);
        await sql`insert into admin_sign_in_failures (email, failed_at) select concat('kept-', seq, '@example.test'), ${later} from seq_1_to_2000`.execute(db);
        await sql`insert into admin_sign_in_locks (email, locked_until) select concat('kept-', seq, '@example.test'), ${later} from seq_1_to_2000`.execute(db);
        await sql`insert into audit_events (at, partner_id, admin_email, action) select ${later}, 'acme', 'ada@acme.example', 'admin.signed_in' from seq_1_to_2000`.execute(db);
        await sql`analyze table admin_sign_in_failures, admin_sign_in_locks, audit_events`.execute(db);
        const plans = [
          sql`explain delete from admin_sign_in_failures where failed_at <= ${T} limit 5000`,
          sql`explain delete from admin_sign_in_locks where locked_until <= ${T} limit 5000`,
          sql`explain delete from audit_events where at < ${T} limit 5000`,
        ];
        const keys = await Promise.all(plans.map(async (plan) => (await plan.execute(db)).rows.map((row) => (row as { key: string | null }).key)));
        expect(keys).to.deep.equal([['admin_sign_in_failures_age'], ['admin_sign_in_locks_until'], ['audit_events_age']]);
      });

      it('writes no audit event for a failed sign-in of an email no admin has: no one could ever read it', async function () {
        const store = mysqlAdminStore(testDb.db);
        const signIn = new SignIn(store.accounts, store.sessions, store.throttle, store.audit, new ManualClock(T.getTime()), new MemorySignInAddressBudget(), new PasswordHashGate());
        const refused = await adminRefusal(signIn.execute({ email: 'nobody@acme.example', password: 'a long enough passphrase', address: '192.0.2.1' }));
        expect(refused.code).to.equal('sign_in_failed');
        expect([await rows('admin_sign_in_failures'), await rows('audit_events')]).to.deep.equal([1, 0]);
      });

      it('migration 0009 drops the audit events no one could read (no partner), and runs again', async function () {
        const { db } = testDb;
        await sql`insert into audit_events (at, partner_id, admin_email, action) values (${T}, null, 'nobody@acme.example', 'admin.sign_in_failed'),
          (${T}, 'acme', 'ada@acme.example', 'admin.sign_in_failed')`.execute(db);
        // Kysely runs migrations in order only: the ones after 0009 are forgotten with it, and run again too.
        await sql`delete from kysely_migration where name >= '0009_admin_records_retention'`.execute(db);
        expect(await migrateToLatest(db)).to.deep.equal(await migrationsFrom('0009_admin_records_retention'));
        expect((await mysqlAdminStore(db).audit.list('acme', 10)).map((e) => e.adminEmail)).to.deep.equal(['ada@acme.example']);
        expect(await rows('audit_events')).to.equal(1);
      });
    });
  });
});
