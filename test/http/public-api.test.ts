import { expect } from 'chai';
import fc from 'fast-check';
import type { LookupResult } from '../../src/domain/lookup-result.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { MemoryProductCatalog } from '../support/memory-product-catalog.js';
import { KEYS, searchableFixtureCatalog } from '../fixtures/catalog-fixture.js';
import { STORAGES, type OpenedStorage } from '../support/storages.js';
import { memoryInfrastructure, startTestServer, type Response, type TestServer } from '../support/test-server.js';

const API = '/api/v1/public';
const bearer = (key: string): Record<string, string> => ({ Authorization: `Bearer ${key}` });
const ACME = bearer(KEYS.acme);
const GLOBEX = bearer(KEYS.globex);

const PRODUCT_KEYS = ['id', 'title', 'description', 'short_description', 'image', 'what_text', 'who_text', 'why_text', 'videos', 'pdp_urls'];
const VIDEO_KEYS = ['id', 'name', 'aspect_ratio', 'length'];
const PDP_KEYS = ['id', 'pdp_url', 'video_file_url', 'retailer', 'json_ld'];
const JSON_LD_KEYS = ['@context', '@type', '@id', 'name', 'description', 'transcript', 'inLanguage', 'isFamilyFriendly', 'contentUrl', 'embedUrl', 'genre', 'keywords', 'creator', 'publisher', 'about', 'isPartOf'];

function data(response: Response): LookupResult {
  expect(response.status, response.text).to.equal(200);
  return (response.json() as { data: LookupResult }).data;
}

function expectError(response: Response, status: number, code: string): void {
  expect(response.status, response.text).to.equal(status);
  expect(response.headers['content-type']).to.match(/^application\/json/);
  const body = response.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).to.deep.equal(['error', 'message']);
  expect(body.error).to.equal(code);
  expect(body.message).to.be.a('string').and.not.equal('');
}

for (const [storageName, useStorage] of STORAGES) describe(`HTTP: public API on ${storageName} storage`, function () {
  const storage = useStorage();
  let server: TestServer;
  let opened: OpenedStorage;

  beforeEach(async function () {
    opened = await storage.open();
    server = await startTestServer(opened.infrastructure);
  });
  afterEach(async function () {
    await server.close();
    await opened.reset();
  });

  describe('lookup by SKU', function () {
    it('answers 200 with exactly the documented fields at every level', async function () {
      const response = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      expect(response.headers['content-type']).to.match(/^application\/json/);
      const body = response.json() as Record<string, unknown>;
      expect(Object.keys(body)).to.deep.equal(['data']);
      const result = data(response);
      expect(Object.keys(result).sort()).to.deep.equal(['product', 'sku', 'status']);
      expect(result).to.include({ sku: 'TENT-2P', status: 'active' });
      expect(Object.keys(result.product).sort()).to.deep.equal([...PRODUCT_KEYS].sort());
      for (const video of result.product.videos) expect(Object.keys(video).sort()).to.deep.equal([...VIDEO_KEYS].sort());
      for (const entry of result.product.pdp_urls) {
        expect(Object.keys(entry).sort()).to.deep.equal([...PDP_KEYS].sort());
        if (entry.json_ld !== null) expect(Object.keys(entry.json_ld).sort()).to.deep.equal([...JSON_LD_KEYS].sort());
      }
    });

    it('maps the catalog into JSON-LD as docs/decisions.md (JSON-LD) says', async function () {
      const [first, second] = data(await server.request(`${API}/sku/TENT-2P`, { headers: ACME })).product.pdp_urls;
      expect(first?.json_ld).to.deep.equal({
        '@context': 'https://schema.org',
        '@type': 'VideoObject',
        '@id': 'https://shop.example/p/123',
        name: 'Video tent-pitch',
        description: 'About tent-pitch',
        transcript: 'Transcript of tent-pitch.',
        inLanguage: 'en',
        isFamilyFriendly: true,
        contentUrl: 'https://cdn.example/v/1.mp4',
        embedUrl: 'https://shop.example/p/123',
        genre: ['How-to'],
        keywords: ['tent', 'camping'],
        creator: { '@type': 'Person', name: 'Dana Reyes', jobTitle: 'Gear Specialist' },
        publisher: { '@type': 'Organization', name: 'Acme Outdoor Co.' },
        about: {
          '@type': 'Product',
          '@id': 'https://shop.example/p/123',
          brand: { '@type': 'Brand', name: 'Acme' },
          additionalProperty: [
            { '@type': 'PropertyValue', name: 'Color', value: 'Green' },
            { '@type': 'PropertyValue', name: 'Color', value: 'Grey' },
            { '@type': 'PropertyValue', name: 'Weight', value: '2.1 kg' },
          ],
        },
        isPartOf: { '@type': 'WebPage', '@id': 'https://shop.example/p/123', url: 'https://shop.example/p/123' },
      });
      // A video without name and description falls back to the product's title and short description.
      expect(second?.json_ld).to.include({ name: 'Title TENT-2P', description: 'Short TENT-2P', '@id': 'https://outlet.example/tent?id=9' });
    });

    it('anchors every JSON-LD object to its own entry (docs/api.md, the VideoObject, rule 1)', async function () {
      for (const [headers, sku] of [[ACME, 'TENT-2P'], [GLOBEX, 'SHARED-1']] as const) {
        for (const entry of data(await server.request(`${API}/sku/${sku}`, { headers })).product.pdp_urls) {
          if (entry.json_ld === null) continue;
          const ld = entry.json_ld;
          expect([ld['@id'], ld.embedUrl, ld.isPartOf['@id'], ld.isPartOf.url, ld.about['@id']]).to.deep.equal(Array(5).fill(entry.pdp_url));
          expect(ld.contentUrl).to.equal(entry.video_file_url);
        }
      }
    });

    it('gives null json_ld without a transcript, for an unpublished video, without a file URL or without a video', async function () {
      const entries = data(await server.request(`${API}/sku/TENT-2P`, { headers: ACME })).product.pdp_urls;
      expect(entries.map((e) => [e.pdp_url, e.json_ld === null])).to.deep.equal([
        ['https://shop.example/p/123', false],
        ['https://outlet.example/tent?id=9', false],
        ['https://shop.example/p/124', true],
        ['https://shop.example/p/125', true],
        ['https://shop.example/p/126', true],
        ['https://shop.example/p/127', true],
      ]);
      expect(entries[5]).to.include({ video_file_url: null, retailer: 'Shop' });
      expect(entries[1]?.retailer).to.equal(null);
    });

    it('never lists an unpublished video', async function () {
      const { videos } = data(await server.request(`${API}/sku/TENT-2P`, { headers: ACME })).product;
      expect(videos.map((v) => v.name)).to.deep.equal(['Video tent-pitch', null, null]);
      expect(JSON.stringify(videos)).to.not.include('tent-draft');
    });

    it('returns an inactive product with status "inactive"', async function () {
      expect(data(await server.request(`${API}/sku/OLD.STOVE_1`, { headers: ACME })).status).to.equal('inactive');
    });

    it('matches exactly and case-sensitively', async function () {
      expect(data(await server.request(`${API}/sku/ABC-1`, { headers: ACME })).product.title).to.equal('Upper-case ABC');
      expect(data(await server.request(`${API}/sku/abc-1`, { headers: ACME })).product.title).to.equal('Title abc-1');
      expectError(await server.request(`${API}/sku/Abc-1`, { headers: ACME }), 404, 'sku_not_found');
    });

    it('answers 404 sku_not_found for a SKU that is not in the catalog', async function () {
      expectError(await server.request(`${API}/sku/NO-SUCH-SKU`, { headers: ACME }), 404, 'sku_not_found');
    });

    const invalidSkus: [string, string][] = [
      ['empty, with slash', `${API}/sku/`],
      ['empty, without slash', `${API}/sku`],
      ['51 characters', `${API}/sku/${'a'.repeat(51)}`],
      ['malformed percent-encoding', `${API}/sku/%E0%A4%A`],
      ['a lone percent sign', `${API}/sku/ab%`],
      ['encoded slash', `${API}/sku/a%2Fb`],
      ['encoded NUL', `${API}/sku/a%00b`],
      ['encoded space', `${API}/sku/a%20b`],
      ['non-ASCII', `${API}/sku/caf%C3%A9`],
      ['a disallowed character', `${API}/sku/a*b`],
      ['an encoded plus', `${API}/sku/a%2Bb`],
    ];
    for (const [what, path] of invalidSkus) {
      it(`answers 400 invalid_sku for a SKU that is ${what}`, async function () {
        expectError(await server.request(path, { headers: ACME }), 400, 'invalid_sku');
      });
    }

    it('accepts a SKU of exactly 50 characters and a percent-encoded allowed one', async function () {
      expectError(await server.request(`${API}/sku/${'a'.repeat(50)}`, { headers: ACME }), 404, 'sku_not_found');
      expect(data(await server.request(`${API}/sku/%54ENT-2P`, { headers: ACME })).sku).to.equal('TENT-2P');
    });

    it('never fails with a 5xx, whatever the SKU segment holds', async function () {
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 60 }), async (raw) => {
          const response = await server.request(`${API}/sku/${encodeURIComponent(raw)}`, { headers: bearer(KEYS.acmeSecond) });
          expect([200, 400, 404, 429]).to.include(response.status);
          expect(response.json()).to.be.an('object');
        }),
        { numRuns: 150 },
      );
    });
  });

  describe('lookup by ID', function () {
    it('answers with the same body as the SKU lookup', async function () {
      const bySku = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      const id = data(bySku).product.id;
      const byId = await server.request(`${API}/products/${id}`, { headers: ACME });
      expect(data(byId)).to.deep.equal(data(bySku));
    });

    it('answers another partner\'s product exactly as a missing one: 404 product_not_found', async function () {
      const globexId = data(await server.request(`${API}/sku/GLOBEX-ONLY`, { headers: GLOBEX })).product.id;
      const foreign = await server.request(`${API}/products/${globexId}`, { headers: ACME });
      expectError(foreign, 404, 'product_not_found');
      const missingId = 999_999;
      const missing = await server.request(`${API}/products/${missingId}`, { headers: ACME });
      expectError(missing, 404, 'product_not_found');
      expect(foreign.text.replace(String(globexId), 'N')).to.equal(missing.text.replace(String(missingId), 'N'));
    });

    for (const id of ['0', '01', '-1', '1.5', '1e3', 'abc', '9007199254740992', '99999999999999999999', '%201', '1%20', '']) {
      it(`answers 400 invalid_product_id for ${JSON.stringify(id)}`, async function () {
        expectError(await server.request(`${API}/products/${id}`, { headers: ACME }), 400, 'invalid_product_id');
      });
    }

    it('accepts the largest safe integer as well-formed', async function () {
      expectError(await server.request(`${API}/products/9007199254740991`, { headers: ACME }), 404, 'product_not_found');
    });
  });

  describe('partner isolation', function () {
    it('resolves a shared SKU within each caller\'s own catalog', async function () {
      const acme = data(await server.request(`${API}/sku/SHARED-1`, { headers: ACME }));
      const globex = data(await server.request(`${API}/sku/SHARED-1`, { headers: GLOBEX }));
      expect(acme.product.title).to.equal('Acme shared');
      expect(globex.product.title).to.equal('Globex shared');
      expect(acme.product.id).to.not.equal(globex.product.id);
    });

    it('answers another partner\'s SKU exactly as a missing one', async function () {
      const foreign = await server.request(`${API}/sku/GLOBEX-ONLY`, { headers: ACME });
      const missing = await server.request(`${API}/sku/GLOBEX-ONLY`, { headers: bearer(KEYS.acmeSecond) });
      expectError(foreign, 404, 'sku_not_found');
      expect(foreign.text).to.equal(missing.text);
      expect(foreign.text).to.not.include('Globex');
    });
  });

  describe('authentication', function () {
    it('answers 401 missing_api_key with no key, or only blank headers, and sets no rate-limit headers', async function () {
      for (const headers of [{}, { Authorization: '' }, { 'X-API-Key': '  ' }, { Authorization: ' ', 'X-API-Key': '' }]) {
        const response = await server.request(`${API}/sku/TENT-2P`, { headers });
        expectError(response, 401, 'missing_api_key');
        expect(response.headers['ratelimit-limit']).to.equal(undefined);
      }
    });

    it('accepts the key in either header, and "Bearer" in any letter case', async function () {
      data(await server.request(`${API}/sku/TENT-2P`, { headers: { 'X-API-Key': KEYS.acme } }));
      data(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: `bearer ${KEYS.acme}` } }));
      data(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: `BEARER ${KEYS.acme}` } }));
    });

    it('uses Authorization whenever it is present and non-blank, whatever X-API-Key says', async function () {
      data(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: `Bearer ${KEYS.acme}`, 'X-API-Key': KEYS.unknown } }));
      expectError(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: `Bearer ${KEYS.unknown}`, 'X-API-Key': KEYS.acme } }), 401, 'invalid_api_key');
      expectError(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: `Basic ${KEYS.acme}`, 'X-API-Key': KEYS.acme } }), 401, 'invalid_api_key');
      expectError(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: 'Bearer', 'X-API-Key': KEYS.acme } }), 401, 'invalid_api_key');
      expectError(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: KEYS.acme } }), 401, 'invalid_api_key');
      // A blank Authorization does not count, so X-API-Key is used.
      data(await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: '   ', 'X-API-Key': KEYS.acme } }));
    });

    it('answers 401 invalid_api_key for an unknown, malformed or revoked key', async function () {
      for (const key of [KEYS.unknown, 'pcat_live_short', `pcat_test_${'a'.repeat(40)}`, `${KEYS.acme}!`, KEYS.acmeRevoked, hashApiKey(KEYS.acme)]) {
        const response = await server.request(`${API}/sku/TENT-2P`, { headers: bearer(key) });
        expectError(response, 401, 'invalid_api_key');
        expect(response.headers['www-authenticate']).to.equal('Bearer');
      }
    });

    it('refuses a key on the very next request after it is revoked', async function () {
      data(await server.request(`${API}/sku/TENT-2P`, { headers: ACME }));
      await opened.revoke('acme-prod');
      expectError(await server.request(`${API}/sku/TENT-2P`, { headers: ACME }), 401, 'invalid_api_key');
      data(await server.request(`${API}/sku/TENT-2P`, { headers: bearer(KEYS.acmeSecond) }));
    });

    it('never takes a key from the query string', async function () {
      expectError(await server.request(`${API}/sku/TENT-2P?api_key=${KEYS.acme}`), 401, 'missing_api_key');
    });
  });

  describe('check order', function () {
    it('authenticates before validating input', async function () {
      expectError(await server.request(`${API}/sku/a*b`), 401, 'missing_api_key');
      expectError(await server.request(`${API}/products/0`, { headers: bearer(KEYS.unknown) }), 401, 'invalid_api_key');
    });

    it('validates input before looking up, and counts every authenticated request', async function () {
      const invalid = await server.request(`${API}/sku/a*b`, { headers: ACME });
      expectError(invalid, 400, 'invalid_sku');
      expect(invalid.headers['ratelimit-remaining']).to.equal('99');
      const missing = await server.request(`${API}/sku/NOPE`, { headers: ACME });
      expect(missing.headers['ratelimit-remaining']).to.equal('98');
    });
  });

  describe('rate limit', function () {
    it('lets 100 requests through with counting headers and answers the 101st 429 with Retry-After', async function () {
      for (let i = 1; i <= 100; i += 1) {
        const response = await server.request(`${API}/sku/${i % 2 === 0 ? 'TENT-2P' : 'NOPE'}`, { headers: ACME });
        expect(response.status).to.be.oneOf([200, 404]);
        expect(response.headers['ratelimit-limit']).to.equal('100');
        expect(response.headers['ratelimit-remaining']).to.equal(String(100 - i));
        const reset = Number(response.headers['ratelimit-reset']);
        expect(reset).to.be.within(1, 60);
        // The current IETF draft's fields carry the same numbers.
        expect(response.headers['ratelimit-policy']).to.equal('"default";q=100;w=60');
        expect(response.headers.ratelimit).to.equal(`"default";r=${100 - i};t=${reset}`);
      }
      const refused = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      expectError(refused, 429, 'rate_limit_exceeded');
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).to.be.within(1, 60);
      expect((refused.json() as { message: string }).message).to.include(`${retryAfter} second`);
      expect(refused.headers['ratelimit-remaining']).to.equal('0');
      expect([refused.headers['ratelimit-policy'], refused.headers.ratelimit]).to.deep.equal(['"default";q=100;w=60', `"default";r=0;t=${retryAfter}`]);
      // Rate limit comes before validation: an invalid SKU is refused with 429 too.
      expectError(await server.request(`${API}/sku/a*b`, { headers: ACME }), 429, 'rate_limit_exceeded');
      // Another key of the same partner has its own window.
      const other = await server.request(`${API}/sku/TENT-2P`, { headers: bearer(KEYS.acmeSecond) });
      expect(other.status).to.equal(200);
      expect(other.headers['ratelimit-remaining']).to.equal('99');
    });
  });

  describe('routing', function () {
    for (const path of ['/', '/api/v1/public', '/api/v1/public/skus/TENT-2P', '/API/v1/public/sku/TENT-2P', '/api/v1/public/SKU/TENT-2P', '/api/v2/public/sku/TENT-2P', '/api/v1/public/sku/TENT-2P/extra']) {
      it(`answers 404 not_found for ${path}`, async function () {
        expectError(await server.request(path, { headers: ACME }), 404, 'not_found');
      });
    }

    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      it(`answers ${method} on a known path 405 method_not_allowed with Allow`, async function () {
        const response = await server.request(`${API}/sku/TENT-2P`, { method, headers: ACME });
        expectError(response, 405, 'method_not_allowed');
        expect(response.headers.allow).to.equal('GET, HEAD');
      });
    }

    it('answers HEAD like GET, without a body', async function () {
      const get = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      const head = await server.request(`${API}/sku/TENT-2P`, { method: 'HEAD', headers: ACME });
      expect(head.status).to.equal(200);
      expect(head.text).to.equal('');
      expect(head.headers['content-type']).to.equal(get.headers['content-type']);
      expect(head.headers['content-length']).to.equal(get.headers['content-length']);
      expect(head.headers['ratelimit-limit']).to.equal('100');
    });
  });

  describe('conditional requests', function () {
    it('sends a strong ETag, private revalidation and Vary on every 200, the same for the same product', async function () {
      const first = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      const id = data(first).product.id;
      const byId = await server.request(`${API}/products/${id}`, { headers: bearer(KEYS.acmeSecond) });
      expect(first.headers.etag).to.match(/^"[A-Za-z0-9_-]{32}"$/);
      expect(byId.headers.etag).to.equal(first.headers.etag);
      expect(first.headers['cache-control']).to.equal('private, max-age=0, must-revalidate');
      expect(first.headers.vary).to.equal('Authorization, X-API-Key');
      const other = await server.request(`${API}/sku/SHARED-1`, { headers: ACME });
      expect(other.headers.etag).to.not.equal(first.headers.etag);
    });

    it('answers If-None-Match with the current tag 304 and no body, still counting the request', async function () {
      const first = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      const etag = first.headers.etag!;
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const revalidated = await server.request(`${API}/sku/TENT-2P`, { headers: { ...ACME, 'If-None-Match': ifNoneMatch } });
        expect(revalidated.status, ifNoneMatch).to.equal(304);
        expect(revalidated.text).to.equal('');
        expect(revalidated.headers.etag).to.equal(etag);
        expect(revalidated.headers['cache-control']).to.equal('private, max-age=0, must-revalidate');
        expect(revalidated.headers['ratelimit-remaining']).to.be.a('string');
      }
      expect((await server.request(`${API}/sku/TENT-2P`, { headers: ACME })).headers['ratelimit-remaining']).to.equal('94');
    });

    it('answers a stale or foreign tag with the full body', async function () {
      const acme = await server.request(`${API}/sku/SHARED-1`, { headers: ACME });
      const globex = await server.request(`${API}/sku/SHARED-1`, { headers: { ...GLOBEX, 'If-None-Match': acme.headers.etag! } });
      expect(data(globex).product.title).to.equal('Globex shared');
      const stale = await server.request(`${API}/sku/SHARED-1`, { headers: { ...ACME, 'If-None-Match': '"stale"' } });
      expect(stale.status).to.equal(200);
    });

    it('never turns an error into a 304', async function () {
      const missing = await server.request(`${API}/sku/NOPE`, { headers: { ...ACME, 'If-None-Match': '*' } });
      expectError(missing, 404, 'sku_not_found');
      expect(missing.headers.etag).to.equal(undefined);
    });
  });

  describe('operational endpoints and headers', function () {
    it('answers /healthz and /readyz without a key', async function () {
      expect((await server.request('/healthz')).json()).to.deep.equal({ status: 'ok' });
      const ready = await server.request('/readyz');
      expect(ready.status).to.equal(200);
      expect(ready.json()).to.deep.equal({ status: 'ready' });
    });

    it('sends a JSON API\'s security headers, not a page\'s, and grants no cross-origin access', async function () {
      for (const path of [`${API}/sku/TENT-2P`, `${API}/sku/NOPE`, '/healthz', '/no-such-path']) {
        const response = await server.request(path, { headers: { ...ACME, Origin: 'https://evil.example' } });
        expect(response.headers['x-content-type-options'], path).to.equal('nosniff');
        expect(response.headers['content-security-policy'], path).to.equal("default-src 'none'; frame-ancestors 'none'");
        expect(response.headers['x-frame-options'], path).to.equal('DENY');
        expect(response.headers['referrer-policy'], path).to.equal('no-referrer');
        // Over plain HTTP (no https PUBLIC_BASE_URL) there is no HSTS, and none of a page's policies.
        for (const name of ['strict-transport-security', 'x-download-options', 'cross-origin-opener-policy', 'origin-agent-cluster', 'x-xss-protection']) {
          expect(response.headers[name], `${path} ${name}`).to.equal(undefined);
        }
        expect(response.headers['access-control-allow-origin']).to.equal(undefined);
      }
    });

    it('writes a request\'s W3C trace id in its log line, and ignores a malformed traceparent', async function () {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const sent = [`00-${traceId}-00f067aa0ba902b7-01`, `00-${traceId.toUpperCase()}-00f067aa0ba902b7-01`, `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, 'garbage'];
      for (const traceparent of sent) await server.request('/healthz', { headers: { traceparent } });
      const lines = server.logs.slice(-4).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((line) => line.trace_id)).to.deep.equal([traceId, undefined, undefined, undefined]);
    });

    it('echoes a sane X-Request-Id and replaces an unsafe one', async function () {
      expect((await server.request('/healthz', { headers: { 'X-Request-Id': 'abc-123' } })).headers['x-request-id']).to.equal('abc-123');
      const replaced = (await server.request('/healthz', { headers: { 'X-Request-Id': 'a b<script>' } })).headers['x-request-id'];
      expect(replaced).to.match(/^[0-9a-f-]{36}$/);
    });

    it('logs one JSON line per request and never a key or its hash', async function () {
      await server.request(`${API}/sku/TENT-2P`, { headers: { Authorization: `Bearer ${KEYS.acme}`, 'X-API-Key': KEYS.acmeSecond } });
      await server.request(`${API}/sku/TENT-2P?api_key=${KEYS.globex}`, { headers: { 'X-API-Key': KEYS.unknown } });
      await server.request(`${API}/sku/${KEYS.globex}`, { headers: ACME });
      const requestLines = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request');
      expect(requestLines).to.have.length(3);
      expect(requestLines[0]).to.include({ status: 200, partner: 'acme', keyId: 'acme-prod', method: 'GET' });
      const all = server.logs.join('\n');
      for (const key of Object.values(KEYS)) {
        expect(all).to.not.include(key.slice('pcat_live_'.length));
        expect(all).to.not.include(hashApiKey(key));
      }
    });
  });
});

describe('HTTP: failures of the storage behind the API', function () {
  it('answers 500 internal_error without internals when storage throws, and logs it', async function () {
    const infrastructure = await memoryInfrastructure();
    const failing = {
      ...infrastructure,
      catalog: {
        findBySku: () => Promise.reject(new Error('ER_BAD_FIELD: SELECT secret_column FROM products')),
        findById: () => Promise.reject(new Error('boom')),
        findManyBySku: () => Promise.reject(new Error('ER_BAD_FIELD: SELECT secret_column FROM products')),
        findManyById: () => Promise.reject(new Error('boom')),
      },
      readiness: { isReady: () => Promise.reject(new Error('unreachable')) },
    };
    const server = await startTestServer(failing);
    try {
      const response = await server.request(`${API}/sku/TENT-2P`, { headers: ACME });
      expectError(response, 500, 'internal_error');
      expect(response.text).to.not.match(/SELECT|ER_BAD_FIELD|at .*\.ts/);
      expect(response.headers['ratelimit-limit']).to.equal('100');
      expect(server.logs.some((l) => l.includes('ER_BAD_FIELD'))).to.equal(true);
      const ready = await server.request('/readyz');
      expect(ready.status).to.equal(503);
      expect(ready.json()).to.deep.equal({ status: 'unavailable' });
    } finally {
      await server.close();
    }
  });
});

describe('HTTP: a catalog with thumbnails and upload dates', function () {
  it('serves the search-engine keys where a video has both, and the specification\'s keys elsewhere, as the OpenAPI document describes', async function () {
    // Every answer of the test server is checked against the OpenAPI document.
    const server = await startTestServer({ ...await memoryInfrastructure(), catalog: new MemoryProductCatalog(searchableFixtureCatalog()) });
    try {
      const [pitch, pack] = data(await server.request(`${API}/sku/TENT-2P`, { headers: ACME })).product.pdp_urls;
      expect(Object.keys(pitch?.json_ld ?? {}).sort()).to.deep.equal([...JSON_LD_KEYS, 'thumbnailUrl', 'uploadDate', 'duration'].sort());
      expect(pitch?.json_ld).to.include({ uploadDate: '2026-03-14', duration: 'PT1M33S' });
      expect(Object.keys(pack?.json_ld ?? {})).to.deep.equal(JSON_LD_KEYS);
      const globex = data(await server.request(`${API}/sku/SHARED-1`, { headers: GLOBEX })).product.pdp_urls[0];
      expect(globex?.json_ld?.about).to.include({ name: 'Globex shared', image: 'https://img.example/SHARED-1.jpg' });
    } finally {
      await server.close();
    }
  });
});
