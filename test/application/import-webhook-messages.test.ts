import { expect } from 'chai';
import type { Kysely } from 'kysely';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from '../../src/adapters/memory/memory-webhook-outbox.js';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import type { Database } from '../../src/adapters/mysql/database.js';
import { MysqlCatalogStore } from '../../src/adapters/mysql/mysql-catalog-store.js';
import { MysqlChangesFeed } from '../../src/adapters/mysql/mysql-changes-feed.js';
import { MysqlCursorKeys } from '../../src/adapters/mysql/mysql-cursor-keys.js';
import { MysqlWebhookEndpoints } from '../../src/adapters/mysql/mysql-webhook-endpoints.js';
import { MysqlWebhookOutbox } from '../../src/adapters/mysql/mysql-webhook-outbox.js';
import type { CatalogStore } from '../../src/application/catalog-import/catalog-store.js';
import { ImportCatalog } from '../../src/application/catalog-import/import-catalog.js';
import type { ChangesFeed } from '../../src/application/changes/changes-feed.js';
import type { CursorKeys } from '../../src/application/changes/cursor-keys.js';
import { ReadChanges } from '../../src/application/changes/read-changes.js';
import type { WebhookEndpointStore } from '../../src/application/webhooks/webhook-endpoint-store.js';
import type { ClaimedDelivery, WebhookOutbox } from '../../src/application/webhooks/webhook-outbox.js';
import { CatalogSourceError, piecesOfDocument } from '../../src/domain/catalog-source.js';
import { toChangeView } from '../../src/domain/changes-view.js';
import type { WebhookEndpoint } from '../../src/domain/webhook-endpoint.js';
import type { CatalogChangedMessage } from '../../src/domain/webhook-messages.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { fixtureDocument } from '../fixtures/catalog-fixture.js';
import { useTestDatabase } from '../support/mariadb.js';
import { demoProducts } from '../../src/adapters/catalog-file/catalog-file.js';

type Doc = Record<string, any>;
const doc = (): Doc => fixtureDocument();
const acmeProducts = (d: Doc): any[] => d.partners[0].products as any[];

/** One storage with the fixture imported and no endpoint; fresh per test. */
interface World {
  readonly store: CatalogStore;
  readonly endpoints: WebhookEndpointStore;
  readonly outbox: WebhookOutbox;
  readonly feed: ChangesFeed;
  readonly cursorKeys: CursorKeys;
}

const T0 = new Date(Date.UTC(2026, 0, 5, 9, 0, 0));
const FAR = new Date(Date.UTC(2099, 0, 1));

function endpoint(id: string, partnerId: string, status: 'enabled' | 'disabled' = 'enabled'): WebhookEndpoint {
  return { id, partnerId, url: `https://hooks.example.com/${id}`, description: null, status, createdAt: T0, secrets: { current: generateWebhookSecret(), previous: null } };
}

/** Acme's three changes: ABC-1 changed, NEW-1 added, OLD.STOVE_1 gone. */
function threeAcmeChanges(): Doc {
  const d = doc();
  const products = acmeProducts(d);
  products.find((p) => p.sku === 'ABC-1').title = 'Changed title';
  products.push({ ...products.find((p) => p.sku === 'abc-1'), sku: 'NEW-1' });
  d.partners[0].products = products.filter((p) => p.sku !== 'OLD.STOVE_1');
  return d;
}

function importMessagesSuite(name: string, open: () => Promise<World>): void {
  describe(`an import's webhook messages: ${name}`, function () {
    let world: World;
    const importDoc = (d: Doc): Promise<unknown> => new ImportCatalog(world.store, { now: () => Date.now() }, world.cursorKeys, demoProducts).execute(piecesOfDocument(d));
    const claimAll = (): Promise<ClaimedDelivery[]> => world.outbox.claimDue(FAR, 1_000, 60_000);

    beforeEach(async function () {
      world = await open();
      for (const e of [endpoint('whep_0000000000000001', 'acme'), endpoint('whep_0000000000000002', 'acme'), endpoint('whep_0000000000000003', 'acme', 'disabled'), endpoint('whep_0000000000000009', 'globex')]) {
        expect(await world.endpoints.insertWithin(e, 10)).to.equal('added');
      }
    });

    it('queues one catalog.changed message to each enabled endpoint of the partner, counting and listing what the feed lists from its cursor', async function () {
      await importDoc(threeAcmeChanges());
      const claimed = await claimAll();
      expect(claimed.map((c) => c.endpoint.id).sort()).to.deep.equal(['whep_0000000000000001', 'whep_0000000000000002']);
      const [one, two] = claimed;
      expect(one!.message).to.deep.equal(two!.message);
      expect(one!.message.type).to.equal('catalog.changed');
      expect(one!.message.id).to.match(/^msg_[A-Za-z0-9_-]{22}$/);
      const body = JSON.parse(one!.message.body) as CatalogChangedMessage;
      expect(body.type).to.equal('catalog.changed');
      expect(body.data).to.include({ changes: 3, upserted: 2, deleted: 1 });
      const read = await new ReadChanges(world.feed, world.cursorKeys, { now: () => Date.now() }).execute({ partnerId: 'acme', cursor: body.data.cursor, limit: '1000' });
      const listed = JSON.parse(JSON.stringify(read.changes.map(toChangeView))) as unknown;
      expect(body.data.items).to.deep.equal(listed);
      expect(body.data.items!.map((item) => [item.sku, item.change])).to.have.deep.members([['ABC-1', 'upserted'], ['NEW-1', 'upserted'], ['OLD.STOVE_1', 'deleted']]);
      expect(await world.outbox.pendingCount()).to.equal(2);
    });

    it('queues nothing for an import that changes nothing', async function () {
      await importDoc(doc());
      expect(await claimAll()).to.deep.equal([]);
      expect(await world.outbox.pendingCount()).to.equal(0);
    });

    it('leaves the items out past 100 changes, and still counts them', async function () {
      const d = doc();
      const template = acmeProducts(d).find((p) => p.sku === 'abc-1');
      for (let i = 0; i < 101; i += 1) acmeProducts(d).push({ ...template, sku: `BULK-${String(i).padStart(3, '0')}` });
      await importDoc(d);
      const claimed = await claimAll();
      expect(claimed).to.have.length(2);
      const body = JSON.parse(claimed[0]!.message.body) as CatalogChangedMessage;
      expect(body.data).to.deep.equal({ changes: 101, upserted: 101, deleted: 0, cursor: body.data.cursor });
      const read = await new ReadChanges(world.feed, world.cursorKeys, { now: () => Date.now() }).execute({ partnerId: 'acme', cursor: body.data.cursor, limit: '1000' });
      expect(read.changes).to.have.length(101);
    });

    it('messages only the partner whose catalog changed', async function () {
      const d = doc();
      d.partners[1].products[1].title = 'Globex changed';
      await importDoc(d);
      const claimed = await claimAll();
      expect(claimed.map((c) => c.endpoint.id)).to.deep.equal(['whep_0000000000000009']);
      expect(JSON.parse(claimed[0]!.message.body)).to.nested.include({ 'data.changes': 1 });
    });

    it('messages no one for a change to a sandbox alone, though the sandbox\'s feed lists it', async function () {
      const d = doc();
      d.partners[0].sandbox = { products: [{ ...acmeProducts(d).find((p) => p.sku === 'abc-1'), title: 'Only in the sandbox' }] };
      const report = await importDoc(d) as { products: { unchanged: number }; sandbox_products: Record<string, number> };
      expect(report.sandbox_products).to.include({ created: 1, deleted: 4 });
      expect(await claimAll()).to.deep.equal([]);
      expect(await world.outbox.pendingCount()).to.equal(0);
      const read = await new ReadChanges(world.feed, world.cursorKeys, { now: () => Date.now() }).execute({ partnerId: '~acme', cursor: undefined, limit: '1000' });
      expect(read.changes.map((change) => `${change.sku} ${change.change}`)).to.include('abc-1 upserted');
      // A live change in the same import still reaches the live partner's endpoints.
      acmeProducts(d)[0].title = 'Live change';
      await importDoc(d);
      expect((await claimAll()).map((c) => c.endpoint.id).sort()).to.deep.equal(['whep_0000000000000001', 'whep_0000000000000002']);
    });

    it('queues nothing for an import that is refused after a partner\'s changes were written', async function () {
      const failing = threeAcmeChanges();
      // A partner larger than a batch comes next: Acme, held until then, is written before it, and Globex refused after.
      failing.partners.splice(1, 0, { id: 'big', name: 'Big', products: Array.from({ length: 600 }, (_, i) => ({ ...(acmeProducts(doc())[2] as Record<string, unknown>), sku: `BIG-${i}` })) });
      delete failing.partners[2].products[1].title;
      // Watches the unit of work: Acme's message is queued in it before the file is refused.
      let queued = 0;
      const watched: CatalogStore = {
        importing: (work) => world.store.importing((session) => work(Object.assign(Object.create(session) as typeof session, {
          queueWebhookMessages: (messages: Parameters<typeof session.queueWebhookMessages>[0]) => {
            queued += messages.length;
            return session.queueWebhookMessages(messages);
          },
        }))),
      };
      try {
        await new ImportCatalog(watched, { now: () => Date.now() }, world.cursorKeys, demoProducts).execute(piecesOfDocument(failing));
        expect.fail('the file should be refused');
      } catch (error) {
        expect(error).to.be.instanceOf(CatalogSourceError);
      }
      expect(queued).to.equal(1);
      expect(await claimAll()).to.deep.equal([]);
      expect(await world.outbox.pendingCount()).to.equal(0);
      // Then the same changes, imported whole, are messaged once.
      await importDoc(threeAcmeChanges());
      expect(await claimAll()).to.have.length(2);
    });
  });
}

describe('webhook messages from imports', function () {
  importMessagesSuite('memory', async () => {
    const endpoints: MemoryWebhookEndpoints = new MemoryWebhookEndpoints({ hasPartner: (id: string): boolean => store.hasPartner(id) });
    const outbox = new MemoryWebhookOutbox(endpoints);
    const store: MemoryCatalogStore = new MemoryCatalogStore(outbox);
    const cursorKeys = processCursorKeys();
    await new ImportCatalog(store, { now: () => Date.now() }, cursorKeys, demoProducts).execute(piecesOfDocument(fixtureDocument()));
    return { store, endpoints, outbox, feed: store, cursorKeys };
  });

  describe('on MySQL', function () {
    const testDb = useTestDatabase();
    let db: Kysely<Database>;

    importMessagesSuite('mysql', async () => {
      db = testDb.db;
      // A fresh catalog each test: partners go with their products, feeds, endpoints and messages.
      await db.deleteFrom('api_keys').execute();
      await db.deleteFrom('partners').execute();
      const store = new MysqlCatalogStore(db);
      const cursorKeys = new MysqlCursorKeys(db, { secret: null });
      await new ImportCatalog(store, { now: () => Date.now() }, cursorKeys, demoProducts).execute(piecesOfDocument(fixtureDocument()));
      return { store, endpoints: new MysqlWebhookEndpoints(db), outbox: new MysqlWebhookOutbox(db), feed: new MysqlChangesFeed(db), cursorKeys };
    });
  });
});
