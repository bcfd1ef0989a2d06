import { expect } from 'chai';
import { createClient, PartnerCatalogError, type Change } from '../../client/src/index.js';
import { alwaysReady } from '../../src/adapters/memory/always-ready.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { systemClock } from '../../src/application/common/clock.js';
import type { ChangeView } from '../../src/domain/changes-view.js';
import { fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { importDocument } from '../support/import.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** Each assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** Global fetch, recording the query of each exchange. */
function recordingFetch() {
  const queries: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    queries.push(new URL(input instanceof Request ? input.url : String(input)).search);
    return fetch(input, init);
  };
  return { queries, fetch: recording };
}

async function all(feed: AsyncIterable<Change>): Promise<string[]> {
  const skus: string[] = [];
  for await (const change of feed) skus.push(change.sku);
  return skus;
}

/** The fixture's Acme SKUs, in the file's order. */
const ACME_SKUS = ['TENT-2P', 'abc-1', 'ABC-1', 'OLD.STOVE_1', 'SHARED-1'];

describe('client: changes', function () {
  let store: MemoryCatalogStore;
  let server: TestServer;

  beforeEach(async function () {
    store = new MemoryCatalogStore();
    await importDocument(store, fixtureDocument());
    server = await startTestServer({ catalog: store, changes: store, keys: store, limiter: new MemoryRateLimiter({ limit: 1_000, clock: systemClock }), readiness: alwaysReady });
  });
  afterEach(async function () {
    await server.close();
  });

  it('declares exactly the service\'s change type', function () {
    const same: Same<Change, ChangeView> = true;
    expect(same).to.equal(true);
  });

  it('follows next_cursor page by page until has_more is false, and keeps the cursor to continue from', async function () {
    const { queries, fetch } = recordingFetch();
    const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, fetch });
    const feed = client.changes({ limit: 2 });
    expect(feed.cursor).to.equal(undefined);
    expect(await all(feed)).to.deep.equal(ACME_SKUS);
    expect(queries.map((query) => new URLSearchParams(query).get('limit'))).to.deep.equal(['2', '2', '2']);
    expect(new URLSearchParams(queries[0]).has('cursor')).to.equal(false);
    expect(feed.cursor).to.be.a('string');

    // Iterating again continues from there: nothing yet, then only what changed.
    expect(await all(feed)).to.deep.equal([]);
    const document = fixtureDocument() as { partners: { products: { sku: string; title: string }[] }[] };
    document.partners[0]!.products.find((p) => p.sku === 'ABC-1')!.title = 'Renamed';
    await importDocument(store, document);
    expect(await all(feed)).to.deep.equal(['ABC-1']);
    expect(await all(client.changes({ cursor: feed.cursor }))).to.deep.equal([]);
  });

  it('leaves the cursor before a page the loop did not finish', async function () {
    const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme });
    const feed = client.changes({ limit: 2 });
    const seen: string[] = [];
    for await (const change of feed) {
      seen.push(change.sku);
      if (seen.length === 3) break;
    }
    // The first page was finished, the second was not: its changes come again.
    expect(await all(client.changes({ cursor: feed.cursor }))).to.deep.equal(ACME_SKUS.slice(2));
  });

  it('throws the API\'s errors while iterating, typed, and waits out a 429', async function () {
    const acme = createClient({ baseUrl: server.url, apiKey: KEYS.acme });
    const globex = createClient({ baseUrl: server.url, apiKey: KEYS.globex }).changes();
    await all(globex);
    const cases: [string, () => Promise<unknown>, number, string][] = [
      ['another partner\'s cursor', () => all(acme.changes({ cursor: globex.cursor })), 400, 'invalid_cursor'],
      ['a made-up cursor', () => all(acme.changes({ cursor: 'c1.1.AAAAAAAAAAA' })), 400, 'invalid_cursor'],
      ['limit 0', () => all(acme.changes({ limit: 0 })), 400, 'invalid_limit'],
      ['no key', () => all(createClient({ baseUrl: server.url, apiKey: '' }).changes()), 401, 'missing_api_key'],
    ];
    for (const [what, call, status, code] of cases) {
      const error = await call().then(() => undefined, (thrown: unknown) => thrown);
      expect(error, what).to.be.instanceOf(PartnerCatalogError);
      expect({ what, status: (error as PartnerCatalogError).status, code: (error as PartnerCatalogError).code }).to.deep.equal({ what, status, code });
    }

    await server.close();
    server = await startTestServer({ catalog: store, changes: store, keys: store, limiter: new MemoryRateLimiter({ limit: 1, windowMs: 1_000, clock: systemClock }), readiness: alwaysReady });
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      await new Promise((resolve) => setTimeout(resolve, ms));
    };
    const limited = createClient({ baseUrl: server.url, apiKey: KEYS.acme, sleep });
    expect(await all(limited.changes({ limit: 3 }))).to.deep.equal(ACME_SKUS);
    expect(waits).to.deep.equal([1_000]);
  });
});
