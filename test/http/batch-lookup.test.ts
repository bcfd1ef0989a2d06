import { expect } from 'chai';
import type { Kysely } from 'kysely';
import { withResponseCache } from '../../src/adapters/cache/cached-product-catalog.js';
import type { Database } from '../../src/adapters/mysql/database.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import type { ProductCatalog } from '../../src/application/lookup/product-catalog.js';
import { parseCatalogSource } from '../../src/domain/catalog-source.js';
import { fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { importCatalog, importDocument } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { STORAGES, type OpenedStorage } from '../support/storages.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { memoryInfrastructure, startTestServer, type Response, type TestServer } from '../support/test-server.js';

/* The batch lookup (docs/api.md, many products in one request), on every storage. */

const API = '/api/v1/public';
const PRODUCTS = `${API}/products`;
const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });
const ACME = bearer(KEYS.acme);
const GLOBEX = bearer(KEYS.globex);

interface Batch {
  readonly data: { sku: string; product: { id: number; title: string } }[];
  readonly not_found: (string | number)[];
}

function batch(response: Response): Batch {
  expect(response.status, response.text).to.equal(200);
  const body = response.json() as Batch;
  expect(Object.keys(body)).to.deep.equal(['data', 'not_found']);
  return body;
}

function expectError(response: Response, status: number, code: string, message: string): void {
  expect(response.status, response.text).to.equal(status);
  expect(response.headers['cache-control']).to.equal('no-store');
  expect(response.json()).to.deep.equal({ error: code, message });
}

/** The single lookup's body as sent, `{"data":...}`, and its `data` as text. */
async function singleData(server: TestServer, path: string, headers = ACME): Promise<string> {
  const response = await server.request(path, { headers });
  expect(response.status, path).to.equal(200);
  return response.text.slice('{"data":'.length, -1);
}

for (const [storageName, useStorage] of STORAGES) describe(`HTTP: batch lookup on ${storageName} storage`, function () {
  const storage = useStorage();
  let server: TestServer;
  let opened: OpenedStorage;
  /** Product IDs of the fixture on this storage, by `partner/SKU`. */
  const ids = new Map<string, number>();

  beforeEach(async function () {
    opened = await storage.open();
    server = await startTestServer(opened.infrastructure);
    for (const [partner, headers] of [['acme', ACME], ['globex', GLOBEX]] as const) {
      for (const item of batch(await server.request(`${PRODUCTS}?sku=TENT-2P,abc-1,SHARED-1,GLOBEX-ONLY`, { headers })).data) ids.set(`${partner}/${item.sku}`, item.product.id);
    }
  });
  afterEach(async function () {
    await server.close();
    await opened.reset();
  });

  describe('the answer', function () {
    it('holds each product found exactly as its single lookup\'s data, in the order asked, then the SKUs not found', async function () {
      const response = await server.request(`${PRODUCTS}?sku=abc-1,NOPE,TENT-2P,OLD.STOVE_1,Abc-1`, { headers: ACME });
      const items = await Promise.all(['abc-1', 'TENT-2P', 'OLD.STOVE_1'].map((sku) => singleData(server, `${API}/sku/${sku}`)));
      expect(response.text).to.equal(`{"data":[${items.join(',')}],"not_found":["NOPE","Abc-1"]}`);
      expect(response.headers['content-type']).to.equal('application/json; charset=utf-8');
      expect(response.headers['content-length']).to.equal(String(Buffer.byteLength(response.text)));
    });

    it('answers by ID the same items, and the IDs not found as numbers', async function () {
      const [tent, abc] = [ids.get('acme/TENT-2P')!, ids.get('acme/abc-1')!];
      const response = await server.request(`${PRODUCTS}?id=${tent},999999,${abc}`, { headers: ACME });
      const items = await Promise.all([tent, abc].map((id) => singleData(server, `${API}/products/${id}`)));
      expect(response.text).to.equal(`{"data":[${items.join(',')}],"not_found":[999999]}`);
      expect(batch(await server.request(`${PRODUCTS}?sku=1,22`, { headers: ACME })).not_found, 'SKUs stay strings').to.deep.equal(['1', '22']);
    });

    it('answers a value given twice once, where it first appears', async function () {
      const bySku = batch(await server.request(`${PRODUCTS}?sku=TENT-2P,abc-1,TENT-2P,NOPE,abc-1,NOPE`, { headers: ACME }));
      expect([bySku.data.map((item) => item.sku), bySku.not_found]).to.deep.equal([['TENT-2P', 'abc-1'], ['NOPE']]);
      const tent = ids.get('acme/TENT-2P')!;
      const byId = batch(await server.request(`${PRODUCTS}?id=${tent},7777777,${tent},7777777`, { headers: ACME }));
      expect([byId.data.map((item) => item.sku), byId.not_found]).to.deep.equal([['TENT-2P'], [7777777]]);
    });

    it('lists another partner\'s product among the values not found, by SKU and by ID, and never shows it', async function () {
      const globexOnly = ids.get('globex/GLOBEX-ONLY')!;
      const bySku = await server.request(`${PRODUCTS}?sku=GLOBEX-ONLY,SHARED-1`, { headers: ACME });
      expect([batch(bySku).data.map((item) => item.product.title), batch(bySku).not_found]).to.deep.equal([['Acme shared'], ['GLOBEX-ONLY']]);
      const byId = await server.request(`${PRODUCTS}?id=${globexOnly},${ids.get('globex/SHARED-1')!}`, { headers: ACME });
      expect(byId.text).to.equal(`{"data":[],"not_found":[${globexOnly},${ids.get('globex/SHARED-1')!}]}`);
      for (const response of [bySku, byId]) expect(response.text).to.not.include('Globex');
      expect(batch(await server.request(`${PRODUCTS}?id=${globexOnly}`, { headers: GLOBEX })).data[0]!.sku).to.equal('GLOBEX-ONLY');
    });

    it('takes 100 values, commas sent as they are or as %2C, and ignores other query parameters', async function () {
      const skus = ['TENT-2P', ...Array.from({ length: 99 }, (_, i) => `MISSING-${i}`)];
      const full = batch(await server.request(`${PRODUCTS}?sku=${skus.join(',')}&fields=all`, { headers: ACME }));
      expect([full.data.length, full.not_found]).to.deep.equal([1, skus.slice(1)]);
      const encoded = await server.request(`${PRODUCTS}?sku=TENT-2P%2Cabc-1,%41BC-1&x=1`, { headers: ACME });
      expect(batch(encoded).data.map((item) => item.sku)).to.deep.equal(['TENT-2P', 'abc-1', 'ABC-1']);
    });
  });

  describe('refusals', function () {
    const hundredAndOne = Array.from({ length: 101 }, (_, i) => `S-${i}`).join(',');
    const refusals: [string, string, string, string][] = [
      ['101 values', `?sku=${hundredAndOne}`, 'invalid_batch', 'A batch holds 1 to 100 values; this one has 101.'],
      ['101 IDs, one of them malformed', `?id=0${',1'.repeat(100)}`, 'invalid_batch', 'A batch holds 1 to 100 values; this one has 101.'],
      ['neither sku nor id', '', 'invalid_batch', 'Send sku or id, holding 1 to 100 comma-separated values.'],
      ['only other parameters', '?SKU=TENT-2P&ids=1', 'invalid_batch', 'Send sku or id, holding 1 to 100 comma-separated values.'],
      ['both sku and id', '?sku=TENT-2P&id=1', 'invalid_batch', 'Send sku or id, not both.'],
      ['sku given twice', '?sku=TENT-2P&sku=abc-1', 'invalid_batch', 'Send sku once; it was sent 2 times.'],
      ['id given three times', '?id=1&id=2&id=3', 'invalid_batch', 'Send id once; it was sent 3 times.'],
      ['an empty value between commas', '?sku=TENT-2P,,abc-1', 'invalid_sku', 'Value 2 of 3: SKU must not be empty.'],
      ['a trailing comma', '?sku=TENT-2P,', 'invalid_sku', 'Value 2 of 2: SKU must not be empty.'],
      ['an empty sku', '?sku=', 'invalid_sku', 'Value 1 of 1: SKU must not be empty.'],
      ['a SKU of 51 characters', `?sku=TENT-2P,${'a'.repeat(51)}`, 'invalid_sku', 'Value 2 of 2: SKU must be at most 50 characters long; got 51.'],
      ['a SKU with a space', '?sku=abc-1,TENT+2P,a*b', 'invalid_sku', 'Value 2 of 3: SKU may contain only letters, digits, hyphen, underscore and period.'],
      ['an ID with a leading zero', '?id=1,01', 'invalid_product_id', 'Value 2 of 2: Product ID must be a positive integer without leading zeros, at most 9007199254740991.'],
      ['an empty ID between commas', '?id=1,,2', 'invalid_product_id', 'Value 2 of 3: Product ID must be a positive integer without leading zeros, at most 9007199254740991.'],
      ['an ID above 2^53-1', '?id=9007199254740992', 'invalid_product_id', 'Value 1 of 1: Product ID must be a positive integer without leading zeros, at most 9007199254740991.'],
      ['1,001 query parameters', `?sku=TENT-2P&${Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join('&')}`, 'invalid_query', 'The query string has 1001 parameters; send at most 100.'],
    ];
    for (const [what, query, code, message] of refusals) {
      it(`answers ${what} with 400 ${code}, saying which`, async function () {
        expectError(await server.request(`${PRODUCTS}${query}`, { headers: ACME }), 400, code, message);
      });
    }

    it('checks the key first, and keeps /products/ (an empty ID) the lookup by ID\'s refusal', async function () {
      const noKey = await server.request(`${PRODUCTS}?sku=${hundredAndOne}`);
      expectError(noKey, 401, 'missing_api_key', 'An API key is required, in "Authorization: Bearer <key>" or in "X-API-Key: <key>".');
      expectError(await server.request(`${PRODUCTS}/`, { headers: ACME }), 400, 'invalid_product_id', `Product ID must be a positive integer without leading zeros, at most ${Number.MAX_SAFE_INTEGER}.`);
    });
  });

  describe('caching and the rate limit', function () {
    it('sends a strong ETag with the lookups\' Cache-Control and Vary, the same for the same answer only', async function () {
      const first = await server.request(`${PRODUCTS}?sku=TENT-2P,abc-1,NOPE`, { headers: ACME });
      expect(first.headers.etag).to.match(/^"[A-Za-z0-9_-]{32}"$/);
      expect([first.headers['cache-control'], first.headers.vary]).to.deep.equal(['private, max-age=0, must-revalidate', 'Authorization, X-API-Key']);
      const again = await server.request(`${PRODUCTS}?sku=TENT-2P,abc-1,NOPE,TENT-2P`, { headers: bearer(KEYS.acmeSecond) });
      expect(again.headers.etag, 'the same answer').to.equal(first.headers.etag);
      const others = [
        `${PRODUCTS}?sku=abc-1,TENT-2P,NOPE`, `${PRODUCTS}?sku=TENT-2P,abc-1`, `${PRODUCTS}?sku=TENT-2P,abc-1,NOPE2`,
        `${PRODUCTS}?id=${ids.get('acme/TENT-2P')!},${ids.get('acme/abc-1')!},1234567`, `${PRODUCTS}?sku=TENT-2P`,
      ];
      const etags = await Promise.all(others.map(async (path) => (await server.request(path, { headers: ACME })).headers.etag));
      expect(new Set([first.headers.etag, ...etags]).size, 'another order, fewer values, another value not found, IDs').to.equal(others.length + 1);
      const single = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      expect(etags.at(-1)).to.not.equal(single.headers.etag);
    });

    it('answers If-None-Match naming the current ETag 304 without a body, and HEAD with GET\'s headers', async function () {
      const path = `${PRODUCTS}?sku=TENT-2P,NOPE`;
      const get = await server.request(path, { headers: ACME });
      const etag = get.headers.etag!;
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const revalidated = await server.request(path, { headers: { ...ACME, 'If-None-Match': ifNoneMatch } });
        expect([revalidated.status, revalidated.text, revalidated.headers.etag], ifNoneMatch).to.deep.equal([304, '', etag]);
        expect(revalidated.headers['cache-control']).to.equal('private, max-age=0, must-revalidate');
      }
      expect((await server.request(path, { headers: { ...ACME, 'If-None-Match': '"other"' } })).text).to.equal(get.text);
      const head = await server.request(path, { method: 'HEAD', headers: ACME });
      expect([head.status, head.text, head.headers.etag, head.headers['content-length']]).to.deep.equal([200, '', etag, get.headers['content-length']]);
      const headRevalidated = await server.request(path, { method: 'HEAD', headers: { ...ACME, 'If-None-Match': etag } });
      expect([headRevalidated.status, headRevalidated.text]).to.deep.equal([304, '']);
    });

    it('counts a batch of 100 values as one request, a refused one too', async function () {
      const hundred = Array.from({ length: 100 }, (_, i) => (i === 0 ? 'TENT-2P' : `MISSING-${i}`)).join(',');
      const remaining = async (path: string): Promise<unknown> => (await server.request(path, { headers: bearer(KEYS.acmeSecond) })).headers['ratelimit-remaining'];
      expect(await remaining(`${PRODUCTS}?sku=${hundred}`)).to.equal('99');
      expect(await remaining(`${PRODUCTS}?sku=${hundred},TOO-MANY`)).to.equal('98');
      expect(await remaining(`${PRODUCTS}?sku=${hundred}`)).to.equal('97');
    });
  });
});

/** The fixture with TENT-2P retitled and a product NEW-1 added to Acme's catalog. */
function changedDocument(): Record<string, unknown> {
  const document = fixtureDocument() as { partners: { id: string; products: Record<string, unknown>[] }[] };
  const acme = document.partners.find((partner) => partner.id === 'acme')!;
  const tent = acme.products.find((product) => product.sku === 'TENT-2P')!;
  tent.title = 'Title TENT-2P, retitled';
  acme.products.push({ ...acme.products.find((product) => product.sku === 'abc-1')!, sku: 'NEW-1' });
  return document;
}

/** Servers over a catalog document, each as a fresh instance would hold it. */
type CatalogServing = () => { serve(document: Record<string, unknown>): Promise<ProductCatalog> };

const servings: [string, CatalogServing][] = [
  ['memory', () => ({
    serve: async (document) => {
      const store = new MemoryCatalogStore();
      await importDocument(store, document);
      return store;
    },
  })],
  ['mysql', () => {
    const testDb = useTestDatabase();
    return {
      serve: async (document) => {
        await importCatalog(testDb.db, parseCatalogSource(document));
        return withResponseCache(new MysqlProductCatalog(testDb.db), { ttlMs: 30_000 });
      },
    };
  }],
];

for (const [storageName, useServing] of servings) describe(`HTTP: a batch's ETag follows its items, on ${storageName} storage`, function () {
  const serving = useServing();
  const servers: TestServer[] = [];
  afterEach(async function () {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serverOver(document: Record<string, unknown>): Promise<TestServer> {
    const server = await startTestServer({ ...await memoryInfrastructure(), catalog: await serving.serve(document) });
    servers.push(server);
    return server;
  }
  const answers = async (server: TestServer, paths: string[]): Promise<Response[]> => Promise.all(paths.map((path) => server.request(path, { headers: ACME })));

  it('changes when an item changes or a value becomes found, and only then', async function () {
    const paths = [`${PRODUCTS}?sku=abc-1,TENT-2P`, `${PRODUCTS}?sku=abc-1,NEW-1`, `${PRODUCTS}?sku=abc-1,NOPE`];
    const before = await answers(await serverOver(fixtureDocument()), paths);
    const changed = await serverOver(changedDocument());
    const after = await answers(changed, paths);
    expect(batch(after[0]!).data[1]!.product.title).to.equal('Title TENT-2P, retitled');
    expect([batch(before[1]!).not_found, batch(after[1]!).not_found]).to.deep.equal([['NEW-1'], []]);
    expect(after.map((response, i) => response.headers.etag === before[i]!.headers.etag)).to.deep.equal([false, false, true]);
    // A copy kept from before is answered in full, a copy of the unchanged batch 304.
    const revalidated = await Promise.all(paths.map((path, i) => changed.request(path, { headers: { ...ACME, 'If-None-Match': before[i]!.headers.etag! } })));
    expect(revalidated.map((response) => response.status)).to.deep.equal([200, 200, 304]);
  });
});

/** The commands each connection sent to MariaDB through the proxy, by MySQL protocol command byte: a command is a packet of sequence 0. */
function commandsSent(proxy: TcpProxy): Map<number, number> {
  const counts = new Map<number, number>();
  for (const chunks of proxy.sent()) {
    const bytes = Buffer.concat(chunks);
    for (let at = 0; at + 4 < bytes.length;) {
      const length = bytes.readUIntLE(at, 3);
      if (bytes[at + 3] === 0) counts.set(bytes[at + 4]!, (counts.get(bytes[at + 4]!) ?? 0) + 1);
      at += 4 + length;
    }
  }
  return counts;
}

const COM_QUERY = 0x03;
const COM_STMT_PREPARE = 0x16;
const COM_STMT_EXECUTE = 0x17;
const NAMES = new Map([[COM_QUERY, 'query'], [COM_STMT_PREPARE, 'prepare'], [COM_STMT_EXECUTE, 'execute']]);

describe('HTTP: a batch of 100 SKUs not held costs one statement on MySQL', function () {
  const testDb = useTestDatabase();
  let proxy: TcpProxy | undefined;
  let db: Kysely<Database> | undefined;
  let server: TestServer | undefined;
  const skus = Array.from({ length: 200 }, (_, i) => `BATCH-${i}`);

  before(async function () {
    const document = fixtureDocument() as { partners: { id: string; products: Record<string, unknown>[] }[] };
    const acme = document.partners[0]!;
    const template = acme.products.find((product) => product.sku === 'abc-1')!;
    acme.products.push(...skus.map((sku) => ({ ...template, sku, title: `Title ${sku}` })));
    await importCatalog(testDb.db, parseCatalogSource(document));
    // In front of this test's database alone: MariaDB's own counters count every client of the server.
    const target = new URL(testDb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
    target.port = String(proxy.port);
    db = createMysqlDatabase(target.toString());
    server = await startTestServer({ ...await memoryInfrastructure(), catalog: withResponseCache(new MysqlProductCatalog(db), { ttlMs: 60_000 }) });
  });
  after(async function () {
    await server?.close();
    await db?.destroy();
    await proxy?.close();
  });

  /** What the requests sent to the database, by command, as `{ query, prepare, execute, other }`. */
  async function sentBy(paths: string[]): Promise<Record<string, number>> {
    const before = commandsSent(proxy!);
    for (const path of paths) expect((await server!.request(path, { headers: ACME })).status, path).to.equal(200);
    const counts: Record<string, number> = { query: 0, prepare: 0, execute: 0, other: 0 };
    for (const [command, total] of commandsSent(proxy!)) counts[NAMES.get(command) ?? 'other']! += total - (before.get(command) ?? 0);
    return counts;
  }

  it('on a new connection, and on one already open; then none for the same products, by batch or one at a time', async function () {
    const first = skus.slice(0, 100);
    const second = skus.slice(100);
    // A new connection sets its session up, and prepares the batch's one statement text.
    expect(await sentBy([`${PRODUCTS}?sku=${first.join(',')}`])).to.deep.equal({ query: 1, prepare: 1, execute: 1, other: 0 });
    expect(await sentBy([`${PRODUCTS}?sku=${second.join(',')}`])).to.deep.equal({ query: 0, prepare: 0, execute: 1, other: 0 });
    const again = await sentBy([`${PRODUCTS}?sku=${[...second, ...first].slice(50, 150).join(',')}`, ...first.slice(0, 10).map((sku) => `${API}/sku/${sku}`)]);
    expect(again).to.deep.equal({ query: 0, prepare: 0, execute: 0, other: 0 });
    const found = batch(await server!.request(`${PRODUCTS}?sku=${second.join(',')}`, { headers: ACME }));
    expect([found.data.length, found.data[0]!.product.title, found.not_found]).to.deep.equal([100, 'Title BATCH-100', []]);
  });
});
