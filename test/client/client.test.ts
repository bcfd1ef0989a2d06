import { expect } from 'chai';
import type { Static } from 'typebox';
import { createClient, PartnerCatalogError, type BatchLookupResponse, type CachedLookup, type LookupResult as ClientLookupResult } from '../../client/src/index.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { systemClock } from '../../src/application/common/clock.js';
import type { LookupBatchResponseSchema } from '../../src/domain/lookup-batch.js';
import type { LookupResult as ServiceLookupResult } from '../../src/domain/lookup-result.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { memoryInfrastructure, startTestServer, type TestServer } from '../support/test-server.js';

/** Each assignable to the other. */
type Assignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Every optional field made required, at every depth. */
type DeepRequired<T> = T extends (infer U)[] ? DeepRequired<U>[] : T extends object ? { [K in keyof T]-?: DeepRequired<T[K]> } : T;
/**
 * A field added, removed or retyped on either side breaks it, an optional one too: mutual
 * assignability alone lets a field that is optional on one side and absent on the other through.
 */
type Same<A, B> = Assignable<A, B> extends true ? Assignable<DeepRequired<A>, DeepRequired<B>> : false;

/** The rejection of `promise`, which must be a PartnerCatalogError. */
async function caught(promise: Promise<unknown>): Promise<PartnerCatalogError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(PartnerCatalogError);
    return error as PartnerCatalogError;
  }
  throw new Error('expected a PartnerCatalogError, got a result');
}

/** Global fetch, recording what each exchange sent and got. */
function recordingFetch() {
  const exchanges: { ifNoneMatch: string | null; status: number }[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    exchanges.push({ ifNoneMatch: new Headers(init?.headers).get('If-None-Match'), status: response.status });
    return response;
  };
  return { exchanges, fetch: recording };
}

describe('client: types', function () {
  it('declares exactly the service\'s lookup result type', function () {
    const same: Same<ClientLookupResult, ServiceLookupResult> = true;
    expect(same).to.equal(true);
  });

  it('declares exactly the service\'s batch answer type', function () {
    const same: Same<BatchLookupResponse, Static<typeof LookupBatchResponseSchema>> = true;
    expect(same).to.equal(true);
  });
});

describe('client against the real server', function () {
  let server: TestServer;

  beforeEach(async function () {
    server = await startTestServer(await memoryInfrastructure());
  });
  afterEach(async function () {
    await server.close();
  });

  it('looks up by SKU and by ID, answering exactly what the API sends', async function () {
    const client = createClient({ baseUrl: `${server.url}/`, apiKey: KEYS.acme });
    const bySku = await client.getBySku('TENT-2P');
    const raw = (await server.request('/api/v1/public/sku/TENT-2P', { headers: { 'X-API-Key': KEYS.acme } })).json() as { data: unknown };
    expect(bySku).to.deep.equal(raw.data);
    expect(await client.getById(bySku.product.id)).to.deep.equal(bySku);
    expect(await client.getById(String(bySku.product.id))).to.deep.equal(bySku);
  });

  it('turns every error the lookups can meet into a typed PartnerCatalogError with its code', async function () {
    const acme = createClient({ baseUrl: server.url, apiKey: KEYS.acme });
    const cases: [string, () => Promise<unknown>, number, string][] = [
      ['invalid SKU', () => acme.getBySku('a*b'), 400, 'invalid_sku'],
      ['empty SKU', () => acme.getBySku(''), 400, 'invalid_sku'],
      ['SKU with a slash', () => acme.getBySku('a/b'), 400, 'invalid_sku'],
      ['invalid ID', () => acme.getById(0), 400, 'invalid_product_id'],
      ['no key', () => createClient({ baseUrl: server.url, apiKey: ' ' }).getBySku('TENT-2P'), 401, 'missing_api_key'],
      ['unknown key', () => createClient({ baseUrl: server.url, apiKey: KEYS.unknown }).getBySku('TENT-2P'), 401, 'invalid_api_key'],
      ['revoked key', () => createClient({ baseUrl: server.url, apiKey: KEYS.acmeRevoked }).getById(1), 401, 'invalid_api_key'],
      ['missing SKU', () => acme.getBySku('NO-SUCH-SKU'), 404, 'sku_not_found'],
      ['another partner\'s SKU', () => acme.getBySku('GLOBEX-ONLY'), 404, 'sku_not_found'],
      ['missing ID', () => acme.getById(999_999), 404, 'product_not_found'],
      ['wrong base URL', () => createClient({ baseUrl: `${server.url}/v0`, apiKey: KEYS.acme }).getBySku('TENT-2P'), 404, 'not_found'],
    ];
    for (const [what, call, status, code] of cases) {
      const error = await caught(call());
      expect({ what, status: error.status, code: error.code }).to.deep.equal({ what, status, code });
      expect(error.message, what).to.be.a('string').and.not.equal('');
      expect(error.requestId, what).to.match(/^[0-9a-f-]{36}$/);
      expect(error.retryAfter, what).to.equal(undefined);
    }
  });

  it('reads many products by SKU or by ID, exactly as the API answers, 100 to a request, each value once', async function () {
    const { exchanges, fetch: recording } = recordingFetch();
    const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, fetch: recording });
    const raw = (await server.request('/api/v1/public/products?sku=TENT-2P,NOPE,abc-1', { headers: { 'X-API-Key': KEYS.acme } })).json();
    expect(await client.getManyBySku(['TENT-2P', 'NOPE', 'abc-1', 'TENT-2P'])).to.deep.equal(raw);
    const tent = await client.getBySku('TENT-2P');
    expect(await client.getManyById([tent.product.id, String(tent.product.id), 999_999])).to.deep.equal({ data: [tent], not_found: [999_999] });
    expect(await client.getManyBySku([])).to.deep.equal({ data: [], not_found: [] });
    expect(exchanges.length, 'none for an empty list').to.equal(3);

    // A category re-read of 250 SKUs: three requests of 100, 100 and 50, the answers joined in order.
    const skus = Array.from({ length: 250 }, (_, i) => (i === 120 ? 'abc-1' : i === 249 ? 'TENT-2P' : `MISSING-${i}`));
    const all = await client.getManyBySku(skus);
    expect(all.data.map((item) => item.sku)).to.deep.equal(['abc-1', 'TENT-2P']);
    expect(all.not_found).to.deep.equal(skus.filter((sku) => !['abc-1', 'TENT-2P'].includes(sku)));
    expect(exchanges.length).to.equal(6);
    const error = await caught(client.getManyBySku(['TENT-2P', '']));
    expect([error.status, error.code, error.message]).to.deep.equal([400, 'invalid_sku', 'Value 2 of 2: SKU must not be empty.']);
    expect((await caught(client.getManyById([1, 0]))).code).to.equal('invalid_product_id');
  });

  it('answers internal_error as a typed error', async function () {
    await server.close();
    const down = (): Promise<never> => Promise.reject(new Error('down'));
    const failing = { ...await memoryInfrastructure(), catalog: { findBySku: down, findById: down, findManyBySku: down, findManyById: down } };
    server = await startTestServer(failing);
    const error = await caught(createClient({ baseUrl: server.url, apiKey: KEYS.acme }).getBySku('TENT-2P'));
    expect([error.status, error.code]).to.deep.equal([500, 'internal_error']);
  });

  it('waits out a 503 service_unavailable (storage out of reach) after its Retry-After, then gives up with it typed', async function () {
    await server.close();
    let failures = 1;
    const unreachable = (): Promise<never> => Promise.reject(Object.assign(new Error('database: connection failed'), { storageUnavailable: true }));
    const catalog = (await memoryInfrastructure()).catalog;
    const flaky = {
      ...await memoryInfrastructure(),
      catalog: { findBySku: (...args: Parameters<typeof catalog.findBySku>) => (failures-- > 0 ? unreachable() : catalog.findBySku(...args)), findById: unreachable, findManyBySku: unreachable, findManyById: unreachable },
    };
    server = await startTestServer(flaky);
    const waits: number[] = [];
    const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, sleep: (ms) => Promise.resolve(void waits.push(ms)) });
    expect((await client.getBySku('TENT-2P')).sku).to.equal('TENT-2P');
    expect(waits).to.deep.equal([2_000]);
    const error = await caught(client.getById(1));
    expect([error.status, error.code, error.retryAfter]).to.deep.equal([503, 'service_unavailable', 2]);
    expect(waits).to.deep.equal([2_000, 2_000, 2_000]);
  });

  describe('rate limit', function () {
    beforeEach(async function () {
      await server.close();
      server = await startTestServer({ ...await memoryInfrastructure(), limiter: new MemoryRateLimiter({ limit: 1, windowMs: 1_000, clock: systemClock }) });
    });

    it('waits Retry-After seconds on 429, then retries and succeeds', async function () {
      const waits: number[] = [];
      const sleep = async (ms: number) => {
        waits.push(ms);
        await new Promise((resolve) => setTimeout(resolve, ms));
      };
      const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, sleep });
      await client.getBySku('TENT-2P');
      expect((await client.getBySku('ABC-1')).sku).to.equal('ABC-1');
      expect(waits).to.deep.equal([1_000]);
    });

    it('gives up after maxRetries with a typed rate_limit_exceeded carrying retryAfter', async function () {
      const waits: number[] = [];
      const { exchanges, fetch } = recordingFetch();
      const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, fetch, sleep: (ms) => Promise.resolve(void waits.push(ms)) });
      await client.getBySku('TENT-2P');
      const error = await caught(client.getBySku('TENT-2P'));
      expect([error.status, error.code, error.retryAfter]).to.deep.equal([429, 'rate_limit_exceeded', 1]);
      expect(error.message).to.include('1 second');
      expect(waits).to.deep.equal([1_000, 1_000]);
      expect(exchanges.map((e) => e.status)).to.deep.equal([200, 429, 429, 429]);
      const noRetry = await caught(createClient({ baseUrl: server.url, apiKey: KEYS.acme, maxRetries: 0, sleep: () => Promise.reject(new Error('must not wait')) }).getBySku('TENT-2P'));
      expect(noRetry.code).to.equal('rate_limit_exceeded');
    });
  });

  describe('cache', function () {
    it('revalidates with If-None-Match and answers a 304 from the cached body', async function () {
      const cache = new Map<string, CachedLookup>();
      const { exchanges, fetch } = recordingFetch();
      const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, cache, fetch });
      const first = await client.getBySku('TENT-2P');
      const [entry] = [...cache.values()];
      expect(entry?.etag).to.match(/^"[^"]+"$/);
      const second = await client.getBySku('TENT-2P');
      expect(second).to.deep.equal(first);
      expect(exchanges).to.deep.equal([{ ifNoneMatch: null, status: 200 }, { ifNoneMatch: entry?.etag, status: 304 }]);
    });

    it('replaces a cached body the server no longer confirms', async function () {
      const cache = new Map<string, CachedLookup>();
      const { exchanges, fetch } = recordingFetch();
      const acme = await createClient({ baseUrl: server.url, apiKey: KEYS.acme, cache, fetch }).getBySku('SHARED-1');
      // Same URL, another partner's key: the ETag does not match its answer, so the server sends the body.
      const globex = await createClient({ baseUrl: server.url, apiKey: KEYS.globex, cache, fetch }).getBySku('SHARED-1');
      expect([acme.product.title, globex.product.title]).to.deep.equal(['Acme shared', 'Globex shared']);
      expect(exchanges.map((e) => e.status)).to.deep.equal([200, 200]);
      expect([...cache.values()][0]?.result.product.title).to.equal('Globex shared');
    });

    it('still works when answers carry no ETag: nothing kept, no conditional request', async function () {
      const cache = new Map<string, CachedLookup>();
      const { exchanges, fetch: recording } = recordingFetch();
      const withoutEtag: typeof fetch = async (input, init) => {
        const response = await recording(input, init);
        const headers = new Headers(response.headers);
        headers.delete('ETag');
        return new Response(await response.arrayBuffer(), { status: response.status, headers });
      };
      const client = createClient({ baseUrl: server.url, apiKey: KEYS.acme, cache, fetch: withoutEtag });
      expect((await client.getBySku('TENT-2P')).sku).to.equal('TENT-2P');
      expect((await client.getBySku('TENT-2P')).sku).to.equal('TENT-2P');
      expect(cache.size).to.equal(0);
      expect(exchanges).to.deep.equal([{ ifNoneMatch: null, status: 200 }, { ifNoneMatch: null, status: 200 }]);
    });
  });

  it('reports an answer that is not the API\'s error shape as unexpected_response', async function () {
    const proxy: typeof fetch = () => Promise.resolve(new Response('<html>Bad gateway</html>', { status: 502, headers: { 'Content-Type': 'text/html' } }));
    const error = await caught(createClient({ baseUrl: server.url, apiKey: KEYS.acme, fetch: proxy }).getBySku('TENT-2P'));
    expect([error.status, error.code]).to.deep.equal([502, 'unexpected_response']);
    expect(error.message).to.include('Bad gateway');
  });
});
