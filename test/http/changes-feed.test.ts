import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { createClient, PartnerCatalogError, type Change, type LookupResult, type PartnerCatalogClient } from '../../client/src/index.js';
import { openApiDocument } from '../../src/adapters/http/operations.js';
import { alwaysReady } from '../../src/adapters/memory/always-ready.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { processCursorKeys } from '../../src/adapters/memory/process-cursor-keys.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { MysqlCatalogStore } from '../../src/adapters/mysql/mysql-catalog-store.js';
import { MysqlChangesFeed } from '../../src/adapters/mysql/mysql-changes-feed.js';
import { MysqlCursorKeys } from '../../src/adapters/mysql/mysql-cursor-keys.js';
import { MysqlProductCatalog } from '../../src/adapters/mysql/mysql-product-catalog.js';
import { ImportCatalog } from '../../src/application/catalog-import/import-catalog.js';
import type { CatalogStore } from '../../src/application/catalog-import/catalog-store.js';
import { systemClock } from '../../src/application/common/clock.js';
import type { CursorKeys } from '../../src/application/changes/cursor-keys.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { piecesOfDocument } from '../../src/domain/catalog-source.js';
import { TOMBSTONE_RETENTION_MS, UNSIGNED_CURSOR_WINDOW_MS } from '../../src/domain/changes.js';
import type { ChangesResponse, ChangeView } from '../../src/domain/changes-view.js';
import type { Infrastructure } from '../../src/composition/container.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { importDocument } from '../support/import.js';
import { emptyDatabase, importBeforeTestKeys, migrateTo } from '../support/legacy-database.js';
import { useTestDatabase } from '../support/mariadb.js';
import { startTestServer, type Response, type TestServer } from '../support/test-server.js';
import { demoProducts } from '../../src/adapters/catalog-file/catalog-file.js';

const API = '/api/v1/public';
const ACME = { Authorization: `Bearer ${KEYS.acme}` };
const GLOBEX = { 'X-API-Key': KEYS.globex };
const DAY_MS = 24 * 60 * 60 * 1000;

/** A cursor as the service issued them before it signed them: its tag anyone can compute. */
const unsignedCursor = (partnerId: string, seq: number): string =>
  `c1.${seq.toString(36)}.${createHash('sha256').update(`changes:${partnerId}`).digest('base64url').slice(0, 11)}`;

function product(sku: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const ref = `${sku.toLowerCase()}-video`;
  return {
    sku, status: 'active', title: `Title ${sku}`, description: `Description of ${sku}`, short_description: `Short ${sku}`,
    image: `https://img.example/${sku}.jpg`, what_text: 'What it is', who_text: 'Who it is for', why_text: 'Why it matters',
    brand: 'Acme', properties: [{ name: 'Color', value: 'Green' }],
    videos: [{
      ref, published: true, name: `Video of ${sku}`, description: `How ${sku} works`, aspect_ratio: '16x9', length: 60, language: 'en',
      family_friendly: true, genre: ['How-to'], keywords: ['gear'], creator: { name: 'Dana Reyes', job_title: 'Gear Specialist' },
      transcript: `All about ${sku}.`,
    }],
    pdp_urls: [{ pdp_url: `https://shop.example/p/${sku}`, retailer: 'Shop', video_ref: ref, video_file_url: `https://cdn.example/${sku}.mp4` }],
    ...overrides,
  };
}

const FIFTY = Array.from({ length: 50 }, (_, i) => `SKU-${String(i + 1).padStart(2, '0')}`);

/** Acme with the given products, Globex with two of its own. */
function catalogOf(acme: Record<string, unknown>[]): Record<string, unknown> {
  return {
    format: 'partner-catalog/v1',
    partners: [
      { id: 'acme', name: 'Acme Outdoor Co.', api_keys: [{ id: 'acme-prod', sha256: hashApiKey(KEYS.acme), revoked: false }], products: acme },
      {
        id: 'globex', name: 'Globex Retail', api_keys: [{ id: 'globex-prod', sha256: hashApiKey(KEYS.globex), revoked: false }],
        products: [product('GLOBEX-1'), product('GLOBEX-2')],
      },
    ],
  };
}

/** The day after: three products changed (a title, a description, a transcript, which changes its json_ld), one gone, two new. */
function nextDay(): Record<string, unknown> {
  const products = FIFTY.filter((sku) => sku !== 'SKU-30').map((sku) => {
    if (sku === 'SKU-03') return product(sku, { title: 'A better title' });
    if (sku === 'SKU-10') return product(sku, { description: null });
    if (sku === 'SKU-20') {
      const changed = product(sku) as { videos: Record<string, unknown>[] };
      changed.videos[0]!.transcript = 'A corrected transcript.';
      return changed;
    }
    return product(sku);
  });
  return catalogOf([...products, product('NEW-1'), product('NEW-2')]);
}

/** Your copy of the catalog, as the sync recipe of client/README.md keeps it. */
interface LocalCopy {
  cursor: string | undefined;
  readonly products: Map<string, LookupResult>;
}

/** The sync recipe of client/README.md, as it is written there. */
async function sync(catalog: PartnerCatalogClient, copy: LocalCopy): Promise<Change[]> {
  const fromScratch = copy.cursor === undefined;
  const listed: Change[] = [];
  const feed = catalog.changes({ cursor: copy.cursor, limit: 1000 });
  try {
    for await (const change of feed) {
      listed.push(change);
      if (change.change === 'deleted') {
        copy.products.delete(change.sku);
        continue;
      }
      try {
        copy.products.set(change.sku, await catalog.getBySku(change.sku));
      } catch (error) {
        // Deleted since the page was read: the next sync lists it as deleted.
        if (!(error instanceof PartnerCatalogError && error.code === 'sku_not_found')) throw error;
        copy.products.delete(change.sku);
      }
    }
  } catch (error) {
    // The cursor is older than the deletions the feed keeps (30 days or more): start again from the beginning.
    if (!(error instanceof PartnerCatalogError && error.code === 'cursor_expired')) throw error;
    copy.cursor = undefined;
    return sync(catalog, copy);
  }
  if (fromScratch) {
    // From the beginning the feed lists every product in the catalog: what it did not list is gone.
    const seen = new Set(listed.map((change) => change.sku));
    for (const sku of copy.products.keys()) if (!seen.has(sku)) copy.products.delete(sku);
  }
  copy.cursor = feed.cursor;
  return listed;
}

/** Global fetch, recording each exchange's path, If-None-Match and status. */
function recordingFetch() {
  const exchanges: { path: string; ifNoneMatch: string | null; status: number }[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    exchanges.push({ path: url.pathname, ifNoneMatch: new Headers(init?.headers).get('If-None-Match'), status: response.status });
    return response;
  };
  return { exchanges, fetch: recording };
}

function page(response: Response): ChangesResponse {
  expect(response.status, response.text).to.equal(200);
  return response.json() as ChangesResponse;
}

function expectError(response: Response, status: number, code: string): void {
  expect(response.status, response.text).to.equal(status);
  expect((response.json() as { error: string }).error).to.equal(code);
}

const changesPath = (query: Record<string, string | undefined>): string => {
  const params = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return `${API}/changes${params.size === 0 ? '' : `?${params.toString()}`}`;
};

/** Every page from `cursor` on at `limit`, as raw HTTP. */
async function readAll(server: TestServer, headers: Record<string, string>, limit: number, cursor?: string) {
  const changes: ChangeView[] = [];
  let requests = 0;
  for (;;) {
    const body = page(await server.request(changesPath({ cursor, limit: String(limit) }), { headers }));
    requests += 1;
    expect(body.next_cursor).to.match(/^c2\./);
    expect(body.data.length).to.be.at.most(limit);
    if (body.has_more) expect(body.data.length).to.equal(limit);
    changes.push(...body.data);
    cursor = body.next_cursor;
    if (!body.has_more) return { changes, cursor, requests };
  }
}

/** A storage, empty: where imports write, and what the server reads. */
interface Backend {
  readonly store: CatalogStore;
  readonly served: Pick<Infrastructure, 'catalog' | 'changes' | 'cursorKeys' | 'keys'>;
  /** The deployment's cursor key as an instance started now reads it, had signing begun at `ms`. */
  readonly signingBegan: (ms: number) => Promise<CursorKeys>;
}

const BACKENDS: { readonly name: string; setup(): { fresh(): Promise<Backend> } }[] = [
  {
    name: 'memory',
    setup: () => ({
      fresh: () => {
        const store = new MemoryCatalogStore();
        return Promise.resolve({
          store,
          served: { catalog: store, changes: store, cursorKeys: processCursorKeys(), keys: store },
          signingBegan: (ms) => Promise.resolve(processCursorKeys({ clock: { now: () => ms } })),
        });
      },
    }),
  },
  {
    // Without the response cache, so a lookup right after an import answers what the feed lists.
    name: 'MySQL',
    setup: () => {
      const testDb = useTestDatabase();
      return {
        fresh: async () => {
          const { db } = testDb;
          const tables = ['api_keys', 'product_tombstones', 'pdp_entries', 'videos', 'products', 'partners', 'service_secrets'] as const;
          for (const table of tables) await db.deleteFrom(table).execute();
          return {
            store: new MysqlCatalogStore(db),
            served: { catalog: new MysqlProductCatalog(db), changes: new MysqlChangesFeed(db), cursorKeys: new MysqlCursorKeys(db), keys: new MysqlApiKeyStore(db) },
            signingBegan: async (ms) => {
              await db.updateTable('service_secrets').set({ created_at: new Date(ms) }).execute();
              return new MysqlCursorKeys(db);
            },
          };
        },
      };
    },
  },
];

for (const backend of BACKENDS) describe(`HTTP: changes feed on ${backend.name} storage`, function () {
  const storage = backend.setup();
  let store: CatalogStore;
  let served: Backend['served'];
  let signingBegan: Backend['signingBegan'];
  let server: TestServer;

  const serve = (limit = 10_000, options: { fastPath?: boolean } = {}): Promise<TestServer> => startTestServer({
    ...served, limiter: new MemoryRateLimiter({ limit, clock: systemClock }), readiness: alwaysReady,
  }, options);
  /** Serves again, over `store` as it is now, with another rate limit. */
  const serveAgain = async (limit?: number): Promise<void> => {
    await server.close();
    server = await serve(limit);
  };

  beforeEach(async function () {
    ({ store, served, signingBegan } = await storage.fresh());
    await importDocument(store, catalogOf(FIFTY.map((sku) => product(sku))));
    server = await serve();
  });
  afterEach(async function () {
    await server.close();
  });

  it('lets a partner sync with the client from nothing, then after a re-import look up only the six products that changed, ending with what a full re-read gives', async function () {
    const { exchanges, fetch } = recordingFetch();
    const catalog = createClient({ baseUrl: server.url, apiKey: KEYS.acme, cache: new Map(), fetch });
    const copy: LocalCopy = { cursor: undefined, products: new Map() };

    const first = await sync(catalog, copy);
    expect(first.map((change) => [change.sku, change.change])).to.deep.equal(FIFTY.map((sku) => [sku, 'upserted']));
    expect([...copy.products.keys()].sort()).to.deep.equal(FIFTY);
    // One page at limit 1000, then one lookup per product.
    expect(exchanges.length).to.equal(1 + 50);

    await importDocument(store, nextDay());
    exchanges.length = 0;
    const second = await sync(catalog, copy);
    expect(second.map((change) => [change.sku, change.change])).to.have.deep.members([
      ['SKU-03', 'upserted'], ['SKU-10', 'upserted'], ['SKU-20', 'upserted'], ['SKU-30', 'deleted'], ['NEW-1', 'upserted'], ['NEW-2', 'upserted'],
    ]);
    expect(second).to.have.length(6);
    expect(second.find((change) => change.sku === 'SKU-30')?.etag).to.equal(null);
    // One page, then a lookup of each product listed as upserted: revalidated when the client kept it, fetched when new.
    expect(exchanges.map((e) => [e.path, e.ifNoneMatch !== null, e.status])).to.have.deep.members([
      [`${API}/changes`, false, 200],
      [`${API}/sku/SKU-03`, true, 200], [`${API}/sku/SKU-10`, true, 200], [`${API}/sku/SKU-20`, true, 200],
      [`${API}/sku/NEW-1`, false, 200], [`${API}/sku/NEW-2`, false, 200],
    ]);
    expect(exchanges).to.have.length(6);

    const fullReRead = new Map<string, LookupResult>();
    for (const sku of [...FIFTY.filter((s) => s !== 'SKU-30'), 'NEW-1', 'NEW-2']) {
      const response = await server.request(`${API}/sku/${sku}`, { headers: ACME });
      fullReRead.set(sku, (response.json() as { data: LookupResult }).data);
      const listed = second.find((change) => change.sku === sku);
      if (listed !== undefined) expect(listed.etag, sku).to.equal(response.headers.etag);
    }
    expect(Object.fromEntries(copy.products)).to.deep.equal(Object.fromEntries(fullReRead));
    expect((await server.request(`${API}/sku/SKU-30`, { headers: ACME })).status).to.equal(404);
  });

  it('lists the same changes in the same order at limit 1, 7 and 1000, each page within its limit', async function () {
    await importDocument(store, nextDay());
    const [one, seven, thousand] = [await readAll(server, ACME, 1), await readAll(server, ACME, 7), await readAll(server, ACME, 1000)];
    // From the beginning: the 51 products now in the catalog, and the deleted one.
    expect(thousand.changes).to.have.length(52);
    expect(one.changes).to.deep.equal(thousand.changes);
    expect(seven.changes).to.deep.equal(thousand.changes);
    expect([one.requests, seven.requests, thousand.requests]).to.deep.equal([52, Math.ceil(52 / 7), 1]);
    // Oldest first: the day's changes come last, the products left alone keep their first place.
    expect(thousand.changes.slice(-6).map((change) => change.sku)).to.have.members(['SKU-03', 'SKU-10', 'SKU-20', 'SKU-30', 'NEW-1', 'NEW-2']);
    expect(new Set(thousand.changes.map((change) => change.sku)).size).to.equal(52);
    expect(thousand.changes.map((change) => Date.parse(change.changed_at))).to.deep.equal(thousand.changes.map((change) => Date.parse(change.changed_at)).sort((a, b) => a - b));
  });

  it('refuses another partner\'s cursor with 400 invalid_cursor, and shows each partner only its own products', async function () {
    const globex = await readAll(server, GLOBEX, 1000);
    expect(globex.changes.map((change) => change.sku)).to.deep.equal(['GLOBEX-1', 'GLOBEX-2']);
    const acme = await readAll(server, ACME, 1000);
    expect(acme.changes.map((change) => change.sku)).to.deep.equal(FIFTY);
    expectError(await server.request(changesPath({ cursor: globex.cursor }), { headers: ACME }), 400, 'invalid_cursor');
    expectError(await server.request(changesPath({ cursor: acme.cursor }), { headers: GLOBEX }), 400, 'invalid_cursor');
  });

  it('refuses with 400 invalid_cursor a cursor signed by another deployment, or changed in its position or its MAC', async function () {
    const { cursor } = await readAll(server, ACME, 10);
    const [, position, mac] = cursor.split('.') as [string, string, string];
    const earlier = (parseInt(position, 36) - 10).toString(36);
    for (const changed of [`c2.${earlier}.${mac}`, `c2.${position}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`]) {
      expectError(await server.request(changesPath({ cursor: changed }), { headers: ACME }), 400, 'invalid_cursor');
    }
    served = { ...served, cursorKeys: processCursorKeys() };
    await serveAgain();
    expectError(await server.request(changesPath({ cursor }), { headers: ACME }), 400, 'invalid_cursor');
  });

  it('refuses a cursor of the earlier unsigned form with 400 invalid_cursor on a deployment that never issued one, the caller\'s own tag and all', async function () {
    // The attack: a deployment made minutes ago, which never issued a c1 cursor, and the tag anyone can compute.
    for (const cursor of [unsignedCursor('acme', 1), unsignedCursor('acme', 10), unsignedCursor('acme', 0), unsignedCursor('globex', 1)]) {
      const refused = await server.request(changesPath({ cursor }), { headers: ACME });
      expectError(refused, 400, 'invalid_cursor');
      expect((refused.json() as { message: string }).message, cursor).to.match(/start again without a cursor/);
    }
    // Signing began a day ago, or a month ago: still never issued one.
    for (const ago of [DAY_MS, TOMBSTONE_RETENTION_MS + 60_000]) {
      served = { ...served, cursorKeys: await signingBegan(Date.now() - ago) };
      await serveAgain();
      expectError(await server.request(changesPath({ cursor: unsignedCursor('acme', 10) }), { headers: ACME }), 400, 'invalid_cursor');
    }
    const { cursor } = await readAll(server, ACME, 1000);
    expect(page(await server.request(changesPath({ cursor }), { headers: ACME })).data).to.deep.equal([]);
  });

  it('refuses a bad limit or cursor with 400, a missing key with 401 first, and counts each request like a lookup', async function () {
    for (const limit of ['0', '1001', 'abc', '', '-1', '1.5', '1e2']) {
      expectError(await server.request(changesPath({ limit }), { headers: ACME }), 400, 'invalid_limit');
    }
    const tooLong = `c1.${'a'.repeat(62)}`;
    for (const cursor of ['garbage', '', 'c1.zz.AAAAAAAAAAA', 'c2.zz.AAAAAAAAAAAAAAAA', tooLong]) {
      expectError(await server.request(changesPath({ cursor }), { headers: ACME }), 400, 'invalid_cursor');
    }
    expectError(await server.request(`${API}/changes?limit=1&limit=2`, { headers: ACME }), 400, 'invalid_limit');
    const { cursor } = await readAll(server, ACME, 1000);
    expectError(await server.request(`${API}/changes?cursor=${cursor}&cursor=${cursor}`, { headers: ACME }), 400, 'invalid_cursor');

    const missing = await server.request(changesPath({ limit: '0' }));
    expectError(missing, 401, 'missing_api_key');
    expect(missing.headers['www-authenticate']).to.equal('Bearer');
    expect(missing.headers['ratelimit-limit']).to.equal(undefined);
    expectError(await server.request(changesPath({ cursor: 'garbage' }), { headers: { Authorization: `Bearer ${KEYS.unknown}` } }), 401, 'invalid_api_key');

    // Other query parameters are ignored, as on the lookups; HEAD answers the headers alone.
    const ok = await server.request(`${API}/changes?limit=2&since=yesterday`, { headers: ACME });
    expect(page(ok).data).to.have.length(2);
    expect(ok.headers['cache-control']).to.equal('no-store');
    expect(ok.headers['content-type']).to.match(/^application\/json/);
    const head = await server.request(changesPath({ limit: '2' }), { method: 'HEAD', headers: ACME });
    expect([head.status, head.text, head.headers['cache-control']]).to.deep.equal([200, '', 'no-store']);

    // One window shared with the lookups; every counted answer carries the RateLimit-* headers.
    await serveAgain(3);
    const answers = [
      await server.request(`${API}/sku/SKU-01`, { headers: ACME }),
      await server.request(changesPath({ limit: '1' }), { headers: ACME }),
      await server.request(changesPath({ limit: '0' }), { headers: ACME }),
    ];
    expect(answers.map((r) => [r.status, r.headers['ratelimit-limit'], r.headers['ratelimit-remaining']])).to.deep.equal([
      [200, '3', '2'], [200, '3', '1'], [400, '3', '0'],
    ]);
    const limited = await server.request(changesPath({}), { headers: ACME });
    expectError(limited, 429, 'rate_limit_exceeded');
    expect(limited.headers['retry-after']).to.match(/^[0-9]+$/);
  });

  it('reads its query whole or refuses it, on the fast path and through Koa alike: past 100 parameters, 400 invalid_query, never a cursor or limit dropped', async function () {
    const koa = await serve(10_000, { fastPath: false });
    try {
      const { cursor } = await readAll(server, ACME, 1000);
      const others = (n: number): string => Array.from({ length: n }, (_, i) => `p${i}=1`).join('&');
      for (const target of [server, koa]) {
        const tooMany = await target.request(`${API}/changes?${others(1001)}`, { headers: ACME });
        expectError(tooMany, 400, 'invalid_query');
        expect((tooMany.json() as { message: string }).message).to.equal('The query string has 1001 parameters; send at most 100.');
        // Read only up to its 1,000th parameter, either would start the feed from the beginning instead.
        expectError(await target.request(`${API}/changes?${others(1000)}&cursor=garbage`, { headers: ACME }), 400, 'invalid_query');
        expectError(await target.request(`${API}/changes?${others(1000)}&limit=0`, { headers: ACME }), 400, 'invalid_query');
        // A second cursor past that point does not slip past the refusal of a cursor sent twice.
        expectError(await target.request(`${API}/changes?cursor=${cursor}&${others(999)}&cursor=${cursor}`, { headers: ACME }), 400, 'invalid_query');
        // Up to the bound every parameter is read, the last one too.
        expectError(await target.request(`${API}/changes?${others(99)}&cursor=garbage`, { headers: ACME }), 400, 'invalid_cursor');
        expectError(await target.request(`${API}/changes?cursor=${cursor}&${others(98)}&cursor=${cursor}`, { headers: ACME }), 400, 'invalid_cursor');
        expect(page(await target.request(`${API}/changes?${others(99)}&cursor=${cursor}`, { headers: ACME })).data).to.deep.equal([]);
        // Empty pieces carry nothing and count for nothing.
        expect(page(await target.request(`${API}/changes?${'&'.repeat(2000)}limit=1`, { headers: ACME })).data).to.have.length(1);
      }
    } finally {
      await koa.close();
    }
  });

  it('adds nothing for an import that changes nothing', async function () {
    const { cursor } = await readAll(server, ACME, 1000);
    await importDocument(store, catalogOf(FIFTY.map((sku) => product(sku))));
    const after = page(await server.request(changesPath({ cursor }), { headers: ACME }));
    expect(after).to.deep.equal({ data: [], next_cursor: cursor, has_more: false });
  });

  it('answers 410 cursor_expired to a cursor older than a deletion the feed no longer keeps, and serves a fresh start', async function () {
    const now = Date.now();
    const at = (ms: number) => new ImportCatalog(store, { now: () => ms }, served.cursorKeys, demoProducts);
    ({ store, served, signingBegan } = await storage.fresh());
    await serveAgain();
    const all = catalogOf(FIFTY.map((sku) => product(sku)));
    const withoutOne = catalogOf(FIFTY.filter((sku) => sku !== 'SKU-30').map((sku) => product(sku)));
    await at(now - 40 * DAY_MS).execute(piecesOfDocument(all));
    const beforeDeletion = (await readAll(server, ACME, 1000)).cursor;
    await at(now - 35 * DAY_MS).execute(piecesOfDocument(withoutOne));
    const afterDeletion = (await readAll(server, ACME, 1000, beforeDeletion));
    expect(afterDeletion.changes.map((change) => [change.sku, change.change])).to.deep.equal([['SKU-30', 'deleted']]);

    // The same file today: the deletion is past the retention, so it is dropped.
    expect(now - (now - 35 * DAY_MS)).to.be.above(TOMBSTONE_RETENTION_MS);
    await at(now).execute(piecesOfDocument(withoutOne));
    expectError(await server.request(changesPath({ cursor: beforeDeletion }), { headers: ACME }), 410, 'cursor_expired');
    expect(page(await server.request(changesPath({ cursor: afterDeletion.cursor }), { headers: ACME })).data).to.deep.equal([]);
    const fresh = await readAll(server, ACME, 1000);
    expect(fresh.changes.map((change) => change.sku)).to.deep.equal(FIFTY.filter((sku) => sku !== 'SKU-30'));

    // The client's sync meets the 410 and starts again, dropping what is gone.
    const catalog = createClient({ baseUrl: server.url, apiKey: KEYS.acme });
    const copy: LocalCopy = { cursor: beforeDeletion, products: new Map([['SKU-30', {} as LookupResult]]) };
    await sync(catalog, copy);
    expect([...copy.products.keys()].sort()).to.deep.equal(FIFTY.filter((sku) => sku !== 'SKU-30'));
    expect(copy.cursor).to.equal(fresh.cursor);
  });

  it('is described in the OpenAPI document with its parameters and every answer', function () {
    const operation = (openApiDocument.paths as Record<string, any>)[`${API}/changes`].get;
    const codes = (status: number): unknown => operation.responses[status].content['application/json'].schema.allOf[1].properties.error.enum;
    expect(Object.keys(operation.responses as object)).to.deep.equal(['200', '400', '401', '408', '410', '429', '500', '503']);
    expect([codes(400), codes(401), codes(408), codes(410), codes(429), codes(503)]).to.deep.equal([
      ['invalid_cursor', 'invalid_limit', 'invalid_query', 'bad_request'], ['missing_api_key', 'invalid_api_key'], ['request_timeout'], ['cursor_expired'],
      ['rate_limit_exceeded'], ['service_unavailable'],
    ]);
    expect((operation.parameters as { name: string; in: string; schema: unknown }[]).map((p) => [p.name, p.in, p.schema])).to.deep.equal([
      ['cursor', 'query', { type: 'string', minLength: 1, maxLength: 64 }],
      ['limit', 'query', { type: 'integer', minimum: 1, maximum: 1000, default: 100 }],
    ]);
  });
});

describe('HTTP: changes feed on a MySQL deployment that served its feed before it signed its cursors', function () {
  const testDb = useTestDatabase();
  let server: TestServer;

  const serve = (): Promise<TestServer> => {
    const { db } = testDb;
    return startTestServer({
      catalog: new MysqlProductCatalog(db), changes: new MysqlChangesFeed(db), cursorKeys: new MysqlCursorKeys(db), keys: new MysqlApiKeyStore(db),
      limiter: new MemoryRateLimiter({ limit: 10_000, clock: systemClock }), readiness: alwaysReady,
    });
  };

  beforeEach(async function () {
    const { db } = testDb;
    await emptyDatabase(db);
    await migrateTo(db, '0011_webhook_outbox');
    // Acme's feed, written by a version that issued unsigned cursors and made no cursor key.
    const both = catalogOf(FIFTY.map((sku) => product(sku))) as { partners: unknown[] };
    await importBeforeTestKeys(new MysqlCatalogStore(db), { ...both, partners: both.partners.slice(0, 1) });
    await migrateToLatest(db);
    // This version makes the key with its first import, which brings Globex.
    await importDocument(new MysqlCatalogStore(db), both, new MysqlCursorKeys(db));
    server = await serve();
  });
  afterEach(async function () {
    await server.close();
  });

  it('takes a c1 cursor of a partner it served then, answering a signed one, until 30 days after it began signing; never one of a partner that came after', async function () {
    const tenth = unsignedCursor('acme', 10);
    const body = page(await server.request(changesPath({ cursor: tenth, limit: '1000' }), { headers: ACME }));
    expect(body.data.map((change) => change.sku)).to.deep.equal(FIFTY.slice(10));
    expect(body.next_cursor).to.match(/^c2\./);
    expect(page(await server.request(changesPath({ cursor: body.next_cursor }), { headers: ACME })).data).to.deep.equal([]);
    // Globex's feed began after signing: its own tag is refused, and so is anyone else's.
    expectError(await server.request(changesPath({ cursor: unsignedCursor('globex', 1) }), { headers: GLOBEX }), 400, 'invalid_cursor');
    expectError(await server.request(changesPath({ cursor: unsignedCursor('globex', 1) }), { headers: ACME }), 400, 'invalid_cursor');

    // 30 days and a minute after signing began, acme's is refused too; its signed cursors still work.
    const { cursor } = await readAll(server, ACME, 1000);
    await testDb.db.updateTable('service_secrets').set({ created_at: new Date(Date.now() - UNSIGNED_CURSOR_WINDOW_MS - 60_000) }).execute();
    await server.close();
    server = await serve();
    expectError(await server.request(changesPath({ cursor: tenth }), { headers: ACME }), 400, 'invalid_cursor');
    expect(page(await server.request(changesPath({ cursor }), { headers: ACME })).data).to.deep.equal([]);
  });
});
