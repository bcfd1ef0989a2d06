import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { createClient, jsonLdScriptFor, type VideoObjectJsonLd } from '../../client/src/index.js';
import { alwaysReady } from '../../src/adapters/memory/always-ready.js';
import { MemoryApiKeyStore } from '../support/memory-api-key-store.js';
import { MemoryProductCatalog } from '../support/memory-product-catalog.js';
import { MemoryRateLimiter } from '../../src/adapters/memory/memory-rate-limiter.js';
import { systemClock } from '../../src/application/common/clock.js';
import { parseCatalogSource } from '../../src/domain/catalog-source.js';
import { fixtureDocument, KEYS } from '../fixtures/catalog-fixture.js';
import { launchChromium } from '../support/chromium.js';
import { noChanges, startTestServer, type TestServer } from '../support/test-server.js';

const PAYLOAD = '</script><script>window.__pwned=1</script>';
const PAGE_URL = 'https://shop.example/p/hostile';
/** Chromium resolves it to 127.0.0.1 itself: a plain-HTTP origin that is not loopback, as a LAN address is. */
const LAN_HOST = 'docs.test';

/** The fixture plus a product whose video text tries to break out of the script element. */
function hostileCatalog() {
  const document = fixtureDocument() as { partners: { products: Record<string, unknown>[] }[] };
  document.partners[0]?.products.push({
    sku: 'HOSTILE-1', status: 'active', title: 'Hostile', description: null, short_description: 'Short', image: 'https://img.example/h.jpg',
    what_text: 'w', who_text: 'w', why_text: 'w', brand: 'Acme <b>&amp;</b>', properties: [{ name: 'Note', value: '<!-- \u2028 \u2029 -->' }],
    videos: [{
      ref: 'hostile', published: true, name: '<img src=x onerror="window.__pwned=2">', description: '</SCRIPT ><script>window.__pwned=3</script>',
      aspect_ratio: '16x9', length: 10, language: 'en', family_friendly: true, genre: ['How-to'], keywords: ['<script>'],
      creator: { name: 'Dana', job_title: 'Specialist' }, transcript: `Intro. ${PAYLOAD} Outro.`,
      // Both search-engine fields: the embedded object is the rich one, with thumbnailUrl, uploadDate and duration.
      thumbnail_url: 'https://img.example/h-thumb.jpg?a=1&b=</script>', upload_date: '2026-03-14T09:00:00+01:00',
    }],
    pdp_urls: [
      { pdp_url: 'https://other.example/p/hostile', retailer: 'Other', video_ref: 'hostile', video_file_url: 'https://cdn.example/h2.mp4' },
      { pdp_url: PAGE_URL, retailer: 'Shop', video_ref: 'hostile', video_file_url: 'https://cdn.example/h.mp4' },
    ],
  });
  const catalog = parseCatalogSource(document);
  return { catalog: new MemoryProductCatalog(catalog), changes: noChanges, keys: new MemoryApiKeyStore(catalog), limiter: new MemoryRateLimiter({ limit: 100, clock: systemClock }), readiness: alwaysReady };
}

/** A partner's product page, rendered on each request from a fresh lookup. */
async function startPartnerSite(apiUrl: string, embed: (ld: VideoObjectJsonLd, html: string) => string): Promise<{ url: string; server: Server }> {
  const client = createClient({ baseUrl: apiUrl, apiKey: KEYS.acme });
  const server = createServer((_req, res) => {
    client.getBySku('HOSTILE-1').then((result) => {
      const ld = result.product.pdp_urls.find((e) => e.pdp_url === PAGE_URL)?.json_ld;
      if (!ld) throw new Error('fixture has no json_ld');
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html><head><title>Hostile</title>${embed(ld, jsonLdScriptFor(result, PAGE_URL))}</head><body><h1>Hostile</h1></body></html>`);
    }).catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

interface Inspection {
  readonly pwned: unknown;
  readonly scripts: number;
  readonly jsonLd: string[];
  readonly images: number;
}

// Evaluated in the page; written as text because the project is type-checked without DOM types.
const INSPECT = `({
  pwned: window.__pwned,
  scripts: document.querySelectorAll('script').length,
  jsonLd: [...document.querySelectorAll('script[type="application/ld+json"]')].map((s) => s.textContent),
  images: document.querySelectorAll('img').length,
})`;

describe('in headless Chromium', function () {
  this.timeout(60_000);
  let browser: Browser | undefined;
  let api: TestServer | undefined;

  before(async function () {
    browser = await launchChromium(this, [`--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`]);
    api = await startTestServer(hostileCatalog());
  });
  after(async function () {
    await browser?.close();
    await api?.close();
  });

  async function visit(embed: (ld: VideoObjectJsonLd, safe: string) => string) {
    const site = await startPartnerSite(api!.url, embed);
    const page = await browser!.newPage();
    try {
      await page.goto(site.url);
      return await page.evaluate<Inspection>(INSPECT);
    } finally {
      await page.close();
      await new Promise((resolve) => site.server.close(resolve));
    }
  }

  it('a page embedding a rich object with jsonLdScriptFor holds exactly one JSON-LD script, equal to the API\'s json_ld, and runs none of its text', async function () {
    const seen = await visit((_ld, safe) => safe);
    const apiLd = ((await api!.request('/api/v1/public/sku/HOSTILE-1', { headers: { 'X-API-Key': KEYS.acme } })).json() as { data: { product: { pdp_urls: { pdp_url: string; json_ld: unknown }[] } } })
      .data.product.pdp_urls.find((e) => e.pdp_url === PAGE_URL)?.json_ld;
    expect(seen.pwned).to.equal(undefined);
    expect(seen.scripts).to.equal(1);
    expect(seen.images).to.equal(0);
    expect(seen.jsonLd).to.have.length(1);
    expect(JSON.parse(seen.jsonLd[0] ?? '')).to.deep.equal(apiLd);
    expect(JSON.stringify(apiLd)).to.include(PAYLOAD);
    expect(apiLd).to.include({ thumbnailUrl: 'https://img.example/h-thumb.jpg?a=1&b=</script>', uploadDate: '2026-03-14T09:00:00+01:00', duration: 'PT10S' });
  });

  it('(control) the same page with plain JSON.stringify is broken out of, so the test above can fail', async function () {
    const seen = await visit((ld) => `<script type="application/ld+json">${JSON.stringify(ld)}</script>`);
    expect(seen.pwned).to.not.equal(undefined);
  });

  it('/docs renders both operations over plain HTTP on a host that is not loopback, with assets from the service alone', async function () {
    const lan = new URL(api!.url);
    lan.hostname = LAN_HOST;
    const page = await browser!.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(`${lan.origin}/`)) foreign.push(request.url());
    });
    try {
      await page.goto(`${lan.origin}/docs`);
      expect(foreign, 'requests that left the page\'s own origin').to.deep.equal([]);
      await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
      const paths = await page.locator('.opblock-summary-path').allTextContents();
      expect(paths).to.include.members(['/api/v1/public/sku/{sku}', '/api/v1/public/products/{id}']);
      expect(await page.locator('.opblock-summary-path').first().textContent()).to.equal('/api/v1/public/sku/{sku}');
      expect(errors).to.deep.equal([]);
      expect(foreign).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
