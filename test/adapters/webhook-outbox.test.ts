import { expect } from 'chai';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from '../../src/adapters/memory/memory-webhook-outbox.js';
import { MysqlWebhookEndpoints } from '../../src/adapters/mysql/mysql-webhook-endpoints.js';
import { duePick, MysqlWebhookOutbox } from '../../src/adapters/mysql/mysql-webhook-outbox.js';
import { fixtureCatalog, fixtureDocument } from '../fixtures/catalog-fixture.js';
import { webhookOutboxContract } from '../contracts/webhook-outbox.contract.js';
import { importCatalog, importDocument } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { migrationsFrom } from '../support/migrations.js';
import { emptyDatabase, importBeforeTestKeys, migrateTo } from '../support/legacy-database.js';
import { MysqlCatalogStore } from '../../src/adapters/mysql/mysql-catalog-store.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';

describe('webhook outbox storage', function () {
  describe('in memory', function () {
    webhookOutboxContract('memory', async () => {
      const store = new MemoryCatalogStore();
      await importDocument(store, fixtureDocument());
      const endpoints = new MemoryWebhookEndpoints(store);
      return { endpoints, outbox: new MemoryWebhookOutbox(endpoints) };
    });
  });

  describe('on MySQL', function () {
    const testDb = useTestDatabase();

    before(async function () {
      await importCatalog(testDb.db, fixtureCatalog());
    });

    const fresh = async (): Promise<void> => {
      await testDb.db.deleteFrom('webhook_messages').execute();
      await testDb.db.deleteFrom('webhook_endpoints').execute();
    };

    webhookOutboxContract('mysql', async () => {
      await fresh();
      return { endpoints: new MysqlWebhookEndpoints(testDb.db), outbox: new MysqlWebhookOutbox(testDb.db) };
    });

    it('migration 0011 runs again over its own tables', async function () {
      // Kysely runs migrations in order only: the ones after 0011 are forgotten with it, and run again too.
      await sql`delete from kysely_migration where name >= '0011_webhook_outbox'`.execute(testDb.db);
      expect(await migrateToLatest(testDb.db)).to.deep.equal(await migrationsFrom('0011_webhook_outbox'));
    });

    it('never gives one delivery to two claimers at once, and gives every due one to some claimer', async function () {
      await fresh();
      const endpoints = new MysqlWebhookEndpoints(testDb.db);
      const outbox = new MysqlWebhookOutbox(testDb.db);
      const now = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
      const ids = ['whep_0000000000000001', 'whep_0000000000000002', 'whep_0000000000000003'];
      for (const id of ids) {
        await endpoints.insertWithin({ id, partnerId: 'acme', url: `https://hooks.example.com/${id}`, description: null, status: 'enabled', createdAt: now, secrets: { current: generateWebhookSecret(), previous: null } }, 10);
      }
      for (let i = 0; i < 20; i += 1) {
        await outbox.enqueue({ id: `msg_${String(i).padStart(22, '0')}`, partnerId: 'acme', type: 'webhook.test', body: '{}', createdAt: new Date(now.getTime() - i), endpointIds: ids });
      }
      // Eight claimers, each on a connection of its own, for 60 deliveries: 80 places, so every one is taken once.
      const claims = await Promise.all(Array.from({ length: 8 }, () => outbox.claimDue(now, 10, 60_000)));
      const taken = claims.flat().map((c) => c.deliveryId);
      expect(taken).to.have.length(60);
      expect(new Set(taken).size).to.equal(60);
      for (const claim of claims) expect(new Set(claim.map((c) => c.claimToken)).size).to.be.at.most(1);
      // A claimer that died: its claims expire, and another takes them, once each.
      const later = new Date(now.getTime() + 60_000);
      const again = await Promise.all(Array.from({ length: 4 }, () => outbox.claimDue(later, 20, 60_000)));
      const retaken = again.flat().map((c) => c.deliveryId);
      expect(new Set(retaken).size).to.equal(60);
      expect(retaken).to.have.length(60);
    });

    it('picks due deliveries by the (state, next_attempt_at) index, and each one\'s partner by its endpoint\'s primary key', async function () {
      await fresh();
      const endpoints = new MysqlWebhookEndpoints(testDb.db);
      const now = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
      const ids = ['whep_0000000000000001', 'whep_0000000000000002'];
      for (const [i, id] of ids.entries()) {
        await endpoints.insertWithin({ id, partnerId: i === 0 ? 'acme' : 'globex', url: `https://hooks.example.com/${id}`, description: null, status: 'enabled', createdAt: now, secrets: { current: generateWebhookSecret(), previous: null } }, 10);
      }
      // A log's worth of deliveries done, and a few due: the index leaves the done ones unread.
      const messages = Array.from({ length: 2_000 }, (_, i) => ({
        id: `msg_${String(i).padStart(22, '0')}`, partner_id: i % 2 === 0 ? 'acme' : 'globex', type: 'webhook.test' as const, body: '{}', created_at: new Date(now.getTime() - i),
      }));
      await testDb.db.insertInto('webhook_messages').values(messages).execute();
      await testDb.db.insertInto('webhook_deliveries').values(messages.map((m, i) => ({
        message_id: m.id, endpoint_id: ids[i % 2]!, state: i < 5 ? 'pending' as const : 'delivered' as const, next_attempt_at: m.created_at, created_at: m.created_at,
      }))).execute();
      await sql`analyze table webhook_deliveries`.execute(testDb.db);
      const pick = duePick(now, 16, { perEndpoint: 4, perPartner: 8 }, { endpoints: new Map([[ids[0]!, 1]]), partners: new Map([['acme', 1]]) });
      const { rows } = await sql<{ table: string; key: string | null }>`explain ${pick}`.execute(testDb.db);
      expect(rows.find((row) => row.table === 'd')?.key, 'the due rows, by the index').to.equal('webhook_deliveries_due');
      // A subquery, not a join: the plan can never start from the endpoints and read each one's whole log.
      expect(rows.find((row) => row.table === 'e')?.key, 'each one\'s partner').to.equal('PRIMARY');
      expect((await pick.execute(testDb.db)).rows, 'the 5 due, not yet claimed').to.have.length(5);
    });

    it('answers a resend of a message pruned while the resend runs "not found" (false), not with an error', async function () {
      await fresh();
      const endpoints = new MysqlWebhookEndpoints(testDb.db);
      const outbox = new MysqlWebhookOutbox(testDb.db);
      const now = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
      const endpointId = 'whep_0000000000000001';
      const messageId = 'msg_0000000000000000000001';
      await endpoints.insertWithin({ id: endpointId, partnerId: 'acme', url: 'https://hooks.example.com/a', description: null, status: 'enabled', createdAt: now, secrets: { current: generateWebhookSecret(), previous: null } }, 10);
      await outbox.enqueue({ id: messageId, partnerId: 'acme', type: 'webhook.test', body: '{}', createdAt: now, endpointIds: [endpointId] });
      await testDb.db.connection().execute(async (pruner) => {
        // Deleted on another connection, not yet committed: the resend still reads the message, then
        // waits for the rows the delete holds, and finds it gone once the delete commits.
        await sql`begin`.execute(pruner);
        await pruner.deleteFrom('webhook_messages').where('id', '=', messageId).execute();
        const resent = outbox.resend(messageId, endpointId, now);
        // This suite's database only; InnoDB refreshes the table only when it was last read over 100 ms
        // before, so it is read less often than that.
        const waiting = async (): Promise<number> => {
          await new Promise((resolve) => setTimeout(resolve, 150));
          const { rows } = await sql<{ state: string }>`select t.trx_state as state from information_schema.innodb_trx t
            join information_schema.processlist p on p.id = t.trx_mysql_thread_id where p.db = database()`.execute(testDb.db);
          return rows.filter((row) => row.state === 'LOCK WAIT').length;
        };
        for (const deadline = Date.now() + 10_000; await waiting() === 0 && Date.now() < deadline;);
        expect(await waiting(), 'the resend waits on the delete').to.equal(1);
        await sql`commit`.execute(pruner);
        expect(await resent).to.equal(false);
      });
      expect(await testDb.db.selectFrom('webhook_deliveries').select('id').execute()).to.deep.equal([]);
    });
  });

  describe('on MySQL, from a schema before migration 0013 (attempts across resends)', function () {
    const testDb = useTestDatabase();
    const now = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
    const at = (ms: number): Date => new Date(now.getTime() + ms);

    it('numbers the attempts of the deliveries queued before it across their resends, marks the resends, and does the same when run again', async function () {
      await emptyDatabase(testDb.db);
      await migrateTo(testDb.db, '0012_feed_before_signing');
      // Today's outbox claims read two columns of later migrations, which add them only where they are not
      // there: a message's traceparent (0017) and a delivery's earlier attempts, 0 until 0013 counts them.
      await sql`alter table webhook_messages add column traceparent varchar(55) null`.execute(testDb.db);
      await sql`alter table webhook_deliveries add column earlier_attempts int unsigned not null default 0`.execute(testDb.db);
      await importBeforeTestKeys(new MysqlCatalogStore(testDb.db), fixtureDocument());
      const endpoints = new MysqlWebhookEndpoints(testDb.db);
      const outbox = new MysqlWebhookOutbox(testDb.db);
      const [a, b] = ['whep_0000000000000001', 'whep_0000000000000002'];
      for (const id of [a, b]) {
        await endpoints.insertWithin({ id, partnerId: 'acme', url: `https://hooks.example.com/${id}`, description: null, status: 'enabled', createdAt: now, secrets: { current: generateWebhookSecret(), previous: null } }, 10);
      }
      const messageId = 'msg_0000000000000000000001';
      await outbox.enqueue({ id: messageId, partnerId: 'acme', type: 'webhook.test', body: '{}', createdAt: now, endpointIds: [a, b] });
      // As the versions before it did: each delivery's attempts numbered from 1, and a resend a plain new delivery.
      const attemptAll = async (t: number, status: number, next: Parameters<MysqlWebhookOutbox['recordAttempt']>[3]): Promise<void> => {
        for (const claimed of await outbox.claimDue(at(t), 10, 60_000)) {
          await outbox.recordAttempt(claimed.deliveryId, claimed.claimToken, { at: at(t), status, error: null, durationMs: 5, excerpt: '' }, next);
        }
      };
      const resendAsBefore = (endpointId: string, t: number) => sql`insert into webhook_deliveries (message_id, endpoint_id, state, next_attempt_at, created_at)
        values (${messageId}, ${endpointId}, 'pending', ${at(t)}, ${at(t)})`.execute(testDb.db);
      await attemptAll(10, 500, { state: 'retry', nextAttemptAt: at(20) });
      await attemptAll(20, 500, { state: 'failed' });
      await resendAsBefore(a, 30);
      await attemptAll(30, 204, { state: 'delivered' });
      await resendAsBefore(a, 40);
      await attemptAll(40, 204, { state: 'delivered' });
      const log = async (endpointId: string) => (await outbox.deliveries(endpointId, 100)).map((e) => [e.attempt, e.resend]);

      expect(await migrateToLatest(testDb.db)).to.deep.equal(await migrationsFrom('0013_attempts_across_resends'));
      expect(await log(a)).to.deep.equal([[4, true], [3, true], [2, false], [1, false]]);
      expect(await log(b)).to.deep.equal([[2, false], [1, false]]);
      // Run again, as after a stop part-way: Kysely runs migrations in order only, so the ones after it are forgotten with it, and run again too.
      await sql`delete from kysely_migration where name >= '0013_attempts_across_resends'`.execute(testDb.db);
      expect(await migrateToLatest(testDb.db)).to.deep.equal(await migrationsFrom('0013_attempts_across_resends'));
      expect(await log(a)).to.deep.equal([[4, true], [3, true], [2, false], [1, false]]);
      // And a resend after it goes on from there.
      expect(await outbox.resend(messageId, a, at(50))).to.equal(true);
      await attemptAll(50, 204, { state: 'delivered' });
      expect((await log(a))[0]).to.deep.equal([5, true]);
    });
  });
});
