import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { STATUS_BY_CODE } from '../../src/adapters/http/error-response.js';
import { PrometheusMetrics } from '../../src/adapters/metrics/prometheus-metrics.js';
import { SANDBOX_ERROR_ANSWERS, SANDBOX_ERROR_SKUS } from '../../src/domain/sandbox.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { STORAGES, type OpenedStorage } from '../support/storages.js';
import { startTestServer, type Response, type TestServer } from '../support/test-server.js';

/* Test keys and the sandbox (docs/api.md, test keys and the sandbox), over HTTP, on every storage. */

const API = '/api/v1/public';
const LIMIT = 100;
const key = (value: string): { headers: Record<string, string> } => ({ headers: { 'X-API-Key': value } });
const LIVE = key(KEYS.acme);

/** The bundled demo products, which every partner of the fixture has as its sandbox (it gives no sandbox section). */
const DEMO = (JSON.parse(readFileSync(new URL('../../catalogs/demo-catalog.json', import.meta.url), 'utf8')) as {
  partners: { id: string; products: { sku: string; title: string }[] }[];
}).partners.find((partner) => partner.id === 'demo')!.products;

interface Lookup {
  readonly data: { sku: string; product: { id: number; title: string; pdp_urls: { json_ld: { publisher: { name: string } } | null }[] } };
}

function found(response: Response): Lookup['data'] {
  expect(response.status, response.text).to.equal(200);
  return (response.json() as Lookup).data;
}

function refusal(response: Response): { status: number; body: unknown } {
  return { status: response.status, body: response.json() };
}

/** What a lookup answers, as a client reads it: status, the body, and the headers a client acts on. */
function asSeen(response: Response): Record<string, unknown> {
  const { headers } = response;
  return {
    status: response.status,
    body: response.json(),
    'retry-after': headers['retry-after'],
    'cache-control': headers['cache-control'],
    'ratelimit-limit': headers['ratelimit-limit'],
    'ratelimit-remaining': headers['ratelimit-remaining'],
    'ratelimit-reset': headers['ratelimit-reset'],
    'ratelimit-policy': headers['ratelimit-policy'],
    ratelimit: headers.ratelimit,
  };
}

/** A refusal by the count, as a client sees it, with `reset` seconds left in the window. */
function rateLimited(reset: string): Record<string, unknown> {
  return {
    status: 429,
    body: { error: 'rate_limit_exceeded', message: `Rate limit exceeded: retry in ${reset} second${reset === '1' ? '' : 's'}.` },
    'retry-after': reset, 'cache-control': 'no-store', 'ratelimit-limit': String(LIMIT), 'ratelimit-remaining': '0', 'ratelimit-reset': reset,
    'ratelimit-policy': `"default";q=${LIMIT};w=60`, ratelimit: `"default";r=0;t=${reset}`,
  };
}

/** An answer without the fields that count down from request to request. */
const withoutCountdown = (answer: Record<string, unknown>): Record<string, unknown> =>
  ({ ...answer, 'ratelimit-remaining': undefined, 'ratelimit-reset': undefined, ratelimit: undefined });

for (const [storageName, useStorage] of STORAGES) describe(`HTTP: test keys and the sandbox on ${storageName} storage`, function () {
  const storage = useStorage();
  let opened: OpenedStorage;
  let server: TestServer;
  let metrics: PrometheusMetrics;
  let test: { id: string; key: string };

  beforeEach(async function () {
    opened = await storage.open();
    metrics = new PrometheusMetrics();
    server = await startTestServer({ ...opened.infrastructure, metrics });
    test = await opened.issue('acme', 'test');
  });
  afterEach(async function () {
    await server.close();
    await opened.reset();
  });

  it('reads the partner\'s sandbox (the bundled demo products, published under its name) through every read, and never live data; a live key never the sandbox', async function () {
    const TEST = key(test.key);
    const tent = DEMO.find((product) => product.sku === 'TENT-2P')!;
    const sandboxTent = found(await server.request(`${API}/sku/TENT-2P`, TEST));
    const liveTent = found(await server.request(`${API}/sku/TENT-2P`, LIVE));
    expect(sandboxTent.product.title).to.equal(tent.title);
    expect(liveTent.product.title).to.not.equal(tent.title);
    expect(sandboxTent.product.id).to.not.equal(liveTent.product.id);
    // The demo products' JSON-LD names the partner as publisher, not the demo's.
    expect(sandboxTent.product.pdp_urls.flatMap((entry) => entry.json_ld?.publisher.name ?? [])).to.include('Acme Outdoor Co.').and.not.include('Demo');

    // A live SKU is not in the sandbox, a sandbox SKU not in the live catalog, by SKU or by ID.
    expect(refusal(await server.request(`${API}/sku/abc-1`, TEST))).to.deep.equal({ status: 404, body: { error: 'sku_not_found', message: 'No product with SKU "abc-1" in your catalog.' } });
    expect((await server.request(`${API}/sku/PACK-40L`, LIVE)).status).to.equal(404);
    expect(found(await server.request(`${API}/sku/PACK-40L`, TEST)).sku).to.equal('PACK-40L');
    expect((await server.request(`${API}/products/${liveTent.product.id}`, TEST)).status).to.equal(404);
    expect((await server.request(`${API}/products/${sandboxTent.product.id}`, LIVE)).status).to.equal(404);
    expect(found(await server.request(`${API}/products/${sandboxTent.product.id}`, TEST)).product.title).to.equal(tent.title);

    const bySku = await server.request(`${API}/products?sku=TENT-2P,abc-1,PACK-40L`, TEST);
    expect(bySku.status).to.equal(200);
    const skuBatch = bySku.json() as { data: Lookup['data'][]; not_found: unknown[] };
    expect(skuBatch.data.map((item) => item.product.title)).to.deep.equal([tent.title, DEMO.find((p) => p.sku === 'PACK-40L')!.title]);
    expect(skuBatch.not_found).to.deep.equal(['abc-1']);
    const byId = (await server.request(`${API}/products?id=${liveTent.product.id},${sandboxTent.product.id}`, TEST)).json() as { data: Lookup['data'][]; not_found: unknown[] };
    expect(byId.data.map((item) => item.product.id)).to.deep.equal([sandboxTent.product.id]);
    expect(byId.not_found).to.deep.equal([liveTent.product.id]);

    // The feed: the sandbox's products and nothing else, and none of them in the live feed.
    const feed = (await server.request(`${API}/changes?limit=1000`, TEST)).json() as { data: { sku: string; product_id: number; change: string }[] };
    expect(feed.data.map((entry) => entry.sku).sort()).to.deep.equal(DEMO.map((product) => product.sku).sort());
    expect(feed.data.every((entry) => entry.change === 'upserted')).to.equal(true);
    const liveFeed = (await server.request(`${API}/changes?limit=1000`, LIVE)).json() as { data: { product_id: number }[] };
    const sandboxIds = new Set(feed.data.map((entry) => entry.product_id));
    expect(liveFeed.data.filter((entry) => sandboxIds.has(entry.product_id))).to.deep.equal([]);
    // A test key's cursor is for the sandbox's feed only.
    const cursor = (await server.request(`${API}/changes?limit=1`, TEST)).json() as { next_cursor: string };
    expect((await server.request(`${API}/changes?cursor=${cursor.next_cursor}`, LIVE)).status).to.equal(400);

    // Another partner's sandbox holds the same demo products under IDs of its own.
    const globexTest = await opened.issue('globex', 'test');
    const globexTent = found(await server.request(`${API}/sku/TENT-2P`, key(globexTest.key)));
    expect(globexTent.product.title).to.equal(tent.title);
    expect(globexTent.product.id).to.not.equal(sandboxTent.product.id);
    expect((await server.request(`${API}/products/${sandboxTent.product.id}`, key(globexTest.key))).status).to.equal(404);
  });

  it('answers TEST-404, TEST-429 and TEST-503 to a test key as the real errors, headers and all, and to a live key as unknown SKUs', async function () {
    const TEST = key(test.key);
    const unknown = asSeen(await server.request(`${API}/sku/NOPE-1`, TEST));
    const asked404 = asSeen(await server.request(`${API}/sku/TEST-404`, TEST));
    expect(withoutCountdown(asked404)).to.deep.equal(withoutCountdown({ ...unknown, body: { error: 'sku_not_found', message: 'No product with SKU "TEST-404" in your catalog.' } }));
    expect(asked404['ratelimit-remaining']).to.equal(String(LIMIT - 2));

    const asked429 = await server.request(`${API}/sku/TEST-429`, TEST);
    const reset = asked429.headers['ratelimit-reset'] as string;
    expect(Number(reset)).to.be.within(1, 60);
    expect(asSeen(asked429)).to.deep.equal(rateLimited(reset));

    const asked503 = await server.request(`${API}/sku/TEST-503`, TEST);
    expect(asSeen(asked503)).to.deep.include({
      status: 503,
      body: { error: 'service_unavailable', message: 'The service cannot reach its storage; retry in 2 seconds.' },
      'retry-after': '2', 'cache-control': 'no-store', 'ratelimit-limit': String(LIMIT), 'ratelimit-remaining': String(LIMIT - 4),
    });

    // Asked for, not met: nothing is logged as a failure.
    expect(server.logs.filter((line) => !line.includes('"msg":"request"'))).to.deep.equal([]);

    // In a batch: the first value that asks for an error decides; TEST-404 is one more value not found.
    expect((await server.request(`${API}/products?sku=TENT-2P,TEST-429,TEST-503`, TEST)).status).to.equal(429);
    expect((await server.request(`${API}/products?sku=TEST-503,TEST-429`, TEST)).status).to.equal(503);
    expect((await server.request(`${API}/products?sku=TEST-404,TENT-2P`, TEST)).json()).to.deep.include({ not_found: ['TEST-404'] });

    for (const sku of ['TEST-404', 'TEST-429', 'TEST-503']) {
      expect(refusal(await server.request(`${API}/sku/${sku}`, LIVE)), sku).to.deep.equal({ status: 404, body: { error: 'sku_not_found', message: `No product with SKU "${sku}" in your catalog.` } });
      expect((await server.request(`${API}/products?sku=${sku}`, LIVE)).json(), sku).to.deep.equal({ data: [], not_found: [sku] });
    }
  });

  it('answers every error SKU a test key may ask for with the code declared for it, whose status is the SKU\'s number', async function () {
    for (const sku of SANDBOX_ERROR_SKUS) {
      const code = SANDBOX_ERROR_ANSWERS[sku];
      const { status, body } = refusal(await server.request(`${API}/sku/${sku}`, key(test.key)));
      expect({ status, error: (body as { error: string }).error }, sku).to.deep.equal({ status: Number(sku.slice('TEST-'.length)), error: code });
      expect(STATUS_BY_CODE[code], sku).to.equal(status);
    }
  });

  it('counts a test key against a limit of its own: its real 429 is the one TEST-429 showed, and the live key\'s window is untouched', async function () {
    const TEST = key(test.key);
    const asked = await server.request(`${API}/sku/TEST-429`, TEST);
    expect(asSeen(asked)).to.deep.equal(rateLimited(asked.headers['ratelimit-reset'] as string));
    let real: Response | undefined;
    let requests = 1;
    while (real === undefined && requests <= LIMIT) {
      const response = await server.request(`${API}/sku/TENT-2P`, TEST);
      requests += 1;
      if (response.status === 429) real = response;
    }
    // TEST-429 counted as one request of the window, as every authenticated request does.
    expect(requests).to.equal(LIMIT + 1);
    // The answer TEST-429 showed, for the seconds now left in the window, with the same headers.
    expect(asSeen(real!)).to.deep.equal(rateLimited(real!.headers['ratelimit-reset'] as string));
    expect(Object.keys(real!.headers).sort()).to.deep.equal(Object.keys(asked.headers).sort());

    const live = await server.request(`${API}/sku/TENT-2P`, LIVE);
    expect(live.status).to.equal(200);
    expect(live.headers['ratelimit-remaining']).to.equal(String(LIMIT - 1));
    // Only the limit's own refusal is counted as one: TEST-429 was asked for.
    const [rejections] = (await metrics.registry.getMetricsAsJSON()).filter(({ name }) => name === 'pcat_rate_limit_rejections_total');
    expect(rejections?.values.find(({ labels }) => labels.limit === 'key')?.value).to.equal(1);
  });

  it('refuses a revoked test key from its next request, and tells its mode in the log line and the metrics', async function () {
    const TEST = key(test.key);
    expect((await server.request(`${API}/sku/TENT-2P`, TEST)).status).to.equal(200);
    await opened.revoke(test.id);
    expect(refusal(await server.request(`${API}/sku/TENT-2P`, TEST))).to.deep.include({ status: 401 });
    expect((await server.request(`${API}/sku/TENT-2P`, LIVE)).status).to.equal(200);

    const lines = server.logs.filter((line) => line.includes('"msg":"request"'));
    // The refusal is logged with the key where the revocation was learnt only after the key was taken (from the shared store).
    const testLines = lines.filter((line) => line.includes(`"keyId":"${test.id}"`)).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(testLines.length).to.be.within(1, 2);
    expect(testLines.map((line) => [line.partner, line.mode])).to.deep.equal(testLines.map(() => ['acme', 'test']));
    expect(lines.filter((line) => line.includes('"keyId":"acme-prod"')).every((line) => line.includes('"mode":"live"'))).to.equal(true);
    expect(server.logs.join('\n')).to.not.include(test.key.slice('pcat_test_'.length));

    const [family] = (await metrics.registry.getMetricsAsJSON()).filter(({ name }) => name === 'pcat_http_requests_total');
    const counted = Object.fromEntries((family?.values ?? []).map(({ labels, value }) => [`${String(labels.mode)} ${String(labels.status)}`, value]));
    const refused = testLines.length === 2 ? 'test 401' : 'live 401';
    expect(counted).to.deep.equal({ 'test 200': 1, [refused]: 1, 'live 200': 1 });
  });
});
