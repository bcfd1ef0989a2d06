import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CatalogSourceError, parseCatalogSource, parseCatalogSourceText } from '../../src/domain/catalog-source.js';
import { fixtureCatalog, fixtureDocument } from '../fixtures/catalog-fixture.js';

type Doc = Record<string, any>;

function problemsOf(document: unknown): readonly string[] {
  try {
    parseCatalogSource(document);
  } catch (error) {
    if (error instanceof CatalogSourceError) return error.problems;
    throw error;
  }
  throw new Error('expected the document to be refused');
}

function broken(edit: (doc: Doc) => void): Doc {
  const doc = fixtureDocument() as Doc;
  edit(doc);
  return doc;
}

describe('catalog source (partner-catalog/v1)', function () {
  it('accepts the fixture and the bundled demo catalog', function () {
    expect(parseCatalogSource(fixtureDocument()).partners.map((p) => p.id)).to.deep.equal(['acme', 'globex']);
    const demo = parseCatalogSourceText(readFileSync('catalogs/demo-catalog.json', 'utf8'));
    expect(demo.partners[0]?.products.length).to.be.greaterThan(3);
  });

  it('reads left-out nullable fields as null and optional lists as empty', function () {
    const catalog = parseCatalogSource(broken((doc) => {
      const product = doc.partners[1].products[1];
      delete product.description;
      delete product.videos;
      delete product.pdp_urls;
      delete product.properties;
    }));
    const product = catalog.partners[1]!.products[1]!;
    expect(product).to.include({ description: null });
    expect(product.videos).to.deep.equal([]);
    expect(product.pdpUrls).to.deep.equal([]);
  });

  const cases: [string, (doc: Doc) => void, string][] = [
    ['a wrong format', (d) => { d.format = 'partner-catalog/v2'; }, 'format: must be "partner-catalog/v1"'],
    ['a bad partner slug', (d) => { d.partners[0].id = 'Acme Co'; }, 'partners[0].id: must be a slug'],
    ['a duplicate partner', (d) => { d.partners[1].id = 'acme'; }, 'partners[1].id: duplicate partner id "acme", first at partners[0].id'],
    ['a bad key hash', (d) => { d.partners[0].api_keys[0].sha256 = 'ABC'; }, 'partners[0].api_keys[0].sha256: must be 64 lowercase hexadecimal characters'],
    ['a duplicate key id', (d) => { d.partners[1].api_keys[0].id = 'acme-prod'; }, 'partners[1].api_keys[0].id: duplicate API key id "acme-prod"'],
    ['an invalid SKU', (d) => { d.partners[0].products[3].sku = 'BAD SKU'; }, 'partners[0].products[3].sku: must be 1 to 50'],
    ['a duplicate SKU', (d) => { d.partners[0].products[1].sku = 'TENT-2P'; }, 'partners[0].products[1].sku: duplicate sku "TENT-2P", first at partners[0].products[0].sku'],
    ['a bad status', (d) => { d.partners[0].products[0].status = 'retired'; }, 'partners[0].products[0].status: must be "active" or "inactive"'],
    ['a relative image URL', (d) => { d.partners[0].products[0].image = '/img.jpg'; }, 'partners[0].products[0].image: must be an absolute http(s) URL'],
    ['a javascript: URL', (d) => { d.partners[0].products[0].pdp_urls[0].pdp_url = 'javascript:alert(1)'; }, 'partners[0].products[0].pdp_urls[0].pdp_url: must be an absolute http(s) URL'],
    ['a bad aspect ratio', (d) => { d.partners[0].products[0].videos[0].aspect_ratio = '16:9'; }, 'partners[0].products[0].videos[0].aspect_ratio: must be <width>x<height>'],
    ['a negative length', (d) => { d.partners[0].products[0].videos[0].length = -1; }, 'partners[0].products[0].videos[0].length: must be a non-negative number'],
    ['a duplicate video ref within a partner', (d) => { d.partners[0].products[1].videos = [d.partners[0].products[0].videos[0]]; }, 'partners[0].products[1].videos[0].ref: duplicate video ref "tent-pitch"'],
    ['a dangling video_ref', (d) => { d.partners[0].products[0].pdp_urls[0].video_ref = 'nope'; }, 'partners[0].products[0].pdp_urls[0].video_ref: names no video of this product: "nope"'],
    ['a duplicate pdp_url', (d) => { d.partners[0].products[0].pdp_urls[1].pdp_url = 'https://shop.example/p/123'; }, 'partners[0].products[0].pdp_urls[1].pdp_url: duplicate pdp_url'],
    ['a missing required field', (d) => { delete d.partners[0].products[0].title; }, 'partners[0].products[0].title: is required'],
    ['an unknown field', (d) => { d.partners[0].products[0].colour = 'green'; }, 'partners[0].products[0].colour: is not a known field'],
    ['a non-string keyword', (d) => { d.partners[0].products[0].videos[0].keywords = ['ok', 3]; }, 'partners[0].products[0].videos[0].keywords[1]: must be a string'],
    ['a relative thumbnail URL', (d) => { d.partners[0].products[0].videos[1].thumbnail_url = '/thumbs/1.jpg'; }, 'partners[0].products[0].videos[1].thumbnail_url: must be an absolute http(s) URL; got "/thumbs/1.jpg"'],
    ['a data: thumbnail URL', (d) => { d.partners[0].products[0].videos[0].thumbnail_url = 'data:image/png;base64,AAAA'; }, 'partners[0].products[0].videos[0].thumbnail_url: must be an absolute http(s) URL'],
    ['a non-string thumbnail URL', (d) => { d.partners[1].products[0].videos[0].thumbnail_url = 7; }, 'partners[1].products[0].videos[0].thumbnail_url: must be a string'],
    ['an impossible upload date', (d) => { d.partners[0].products[0].videos[0].upload_date = '2026-02-30'; }, 'partners[0].products[0].videos[0].upload_date: must name a real day and time; got "2026-02-30"'],
    ['a 29 February outside a leap year', (d) => { d.partners[0].products[0].videos[0].upload_date = '2100-02-29'; }, 'partners[0].products[0].videos[0].upload_date: must name a real day and time'],
    ['an impossible upload time', (d) => { d.partners[0].products[0].videos[0].upload_date = '2026-03-14T24:00:00Z'; }, 'partners[0].products[0].videos[0].upload_date: must name a real day and time'],
    ['an upload date-time without an offset', (d) => { d.partners[0].products[0].videos[2].upload_date = '2026-03-14T09:00:00'; }, 'partners[0].products[0].videos[2].upload_date: must be an ISO 8601 date such as "2026-03-14"'],
    ['an upload date in another format', (d) => { d.partners[0].products[0].videos[0].upload_date = '14/03/2026'; }, 'partners[0].products[0].videos[0].upload_date: must be an ISO 8601 date'],
    ['an upload date-time without seconds', (d) => { d.partners[0].products[0].videos[0].upload_date = '2026-03-14T09:00Z'; }, 'partners[0].products[0].videos[0].upload_date: must be an ISO 8601 date'],
    ['a numeric upload date', (d) => { d.partners[0].products[0].videos[0].upload_date = 20260314; }, 'partners[0].products[0].videos[0].upload_date: must be a string'],
    ['a missing creator job title', (d) => { delete d.partners[0].products[0].videos[0].creator.job_title; }, 'partners[0].products[0].videos[0].creator.job_title: is required'],
    ['a sandbox that is not an object', (d) => { d.partners[0].sandbox = []; }, 'partners[0].sandbox: must be an object'],
    ['a sandbox without products', (d) => { d.partners[0].sandbox = {}; }, 'partners[0].sandbox.products: is required'],
    ['a sandbox with products that are not an array', (d) => { d.partners[0].sandbox = { products: {} }; }, 'partners[0].sandbox.products: must be an array'],
    ['an unknown field of a sandbox', (d) => { d.partners[0].sandbox = { products: [], keys: [] }; }, 'partners[0].sandbox.keys: is not a known field'],
    ['a bad product of a sandbox', (d) => { d.partners[0].sandbox = { products: [{ ...d.partners[0].products[1], status: 'gone' }] }; }, 'partners[0].sandbox.products[0].status: must be "active" or "inactive"'],
    ['a SKU twice within a sandbox', (d) => { d.partners[0].sandbox = { products: [d.partners[0].products[1], d.partners[0].products[1]] }; }, 'partners[0].sandbox.products[1].sku: duplicate sku "abc-1", first at partners[0].sandbox.products[0].sku'],
    ['a video ref twice within a sandbox', (d) => { d.partners[0].sandbox = { products: [d.partners[0].products[0], { ...d.partners[0].products[1], videos: [d.partners[0].products[0].videos[0]] }] }; }, 'partners[0].sandbox.products[1].videos[0].ref: duplicate video ref "tent-pitch", first at partners[0].sandbox.products[0].videos[0].ref'],
    ['a sandbox of more products than a sandbox holds', (d) => { d.partners[0].sandbox = { products: Array.from({ length: 10_001 }, (): unknown => d.partners[0].products[1]) }; }, 'partners[0].sandbox.products: holds 10,001 products; a sandbox holds at most 10,000: it is test data, read whole'],
    ...['TEST-404', 'TEST-429', 'TEST-503'].map((sku): [string, (doc: Doc) => void, string] => [
      `a sandbox product under ${sku}`, (d) => { d.partners[1].sandbox = { products: [{ ...d.partners[0].products[1], sku }] }; },
      `partners[1].sandbox.products[0].sku: "${sku}" is kept for the error it answers a test key; give the product another SKU`,
    ]),
  ];
  for (const [what, edit, expected] of cases) {
    it(`refuses ${what}, naming the JSON path`, function () {
      expect(problemsOf(broken(edit)).some((p) => p.startsWith(expected)), problemsOf(broken(edit)).join('\n')).to.equal(true);
    });
  }

  it('reads a sandbox of the partner\'s own beside its products, SKUs and refs its own; no section reads as none', function () {
    const doc = fixtureDocument() as Doc;
    const [tent, abc] = doc.partners[0].products;
    // A live SKU, video ref and error SKU of a live catalog may all be used again in the sandbox.
    doc.partners[0].products.push({ ...abc, sku: 'TEST-429' });
    doc.partners[0].sandbox = { products: [{ ...tent, title: 'Sandbox tent' }] };
    const [acme, globex] = parseCatalogSource(doc).partners;
    expect(acme!.sandbox!.map((product) => [product.sku, product.title, product.videos.length])).to.deep.equal([['TENT-2P', 'Sandbox tent', tent.videos.length]]);
    expect(acme!.products.map((product) => product.sku)).to.include('TEST-429');
    expect(globex!.sandbox).to.equal(null);
  });

  it('reads a video\'s thumbnail URL and upload date as written, and left out or null as null', function () {
    const accepted = ['2026-03-14', '2024-02-29', '2026-03-14T09:00:00Z', '2026-03-14T09:00:00+01:00', '2026-03-14T23:59:59.125-05:30'];
    const catalog = parseCatalogSource(broken((d) => {
      const videos = d.partners[0].products[0].videos;
      accepted.forEach((date, i) => {
        videos[i % videos.length].thumbnail_url = `https://img.example/t/${i}.jpg`;
        videos[i % videos.length].upload_date = date;
      });
      videos[1].thumbnail_url = null;
      videos[1].upload_date = null;
    }));
    const videos = catalog.partners[0]!.products[0]!.videos;
    expect(videos.map((v) => [v.thumbnailUrl, v.uploadDate])).to.deep.equal([
      ['https://img.example/t/4.jpg', '2026-03-14T23:59:59.125-05:30'],
      [null, null],
      ['https://img.example/t/2.jpg', '2026-03-14T09:00:00Z'],
      ['https://img.example/t/3.jpg', '2026-03-14T09:00:00+01:00'],
    ]);
    expect(fixtureCatalog().partners.flatMap((p) => p.products.flatMap((pr) => pr.videos.map((v) => [v.thumbnailUrl, v.uploadDate]))))
      .to.deep.equal(Array(5).fill([null, null]));
  });

  it('refuses the whole file for a bad thumbnail URL or upload date, listing each by path', function () {
    const problems = problemsOf(broken((d) => {
      d.partners[0].products[0].videos[0].thumbnail_url = 'cdn.example/t.jpg';
      d.partners[0].products[0].videos[0].upload_date = '2026-04-31';
      d.partners[1].products[0].videos[0].upload_date = '2026-03-14 09:00:00Z';
    }));
    expect(problems.map((p) => p.slice(0, p.indexOf(':')))).to.deep.equal([
      'partners[0].products[0].videos[0].thumbnail_url',
      'partners[0].products[0].videos[0].upload_date',
      'partners[1].products[0].videos[0].upload_date',
    ]);
  });

  it('refuses a product whose answer would pass the bound one row of the database holds, naming the product', function () {
    // A long transcript is repeated in the JSON-LD of every PDP entry showing its video.
    const problems = problemsOf(broken((doc) => {
      const tent = doc.partners[0].products[0];
      tent.videos[0].transcript = 'x'.repeat(900_000);
      tent.pdp_urls = Array.from({ length: 5 }, (_, i) => ({ pdp_url: `https://shop.example/tent/${i}`, retailer: null, video_ref: tent.videos[0].ref, video_file_url: 'https://cdn.example/v/1.mp4' }));
    }));
    expect(problems).to.have.length(1);
    expect(problems[0]).to.match(/^partners\[0\]\.products\[0\]: would be answered with 4,5\d\d,\d\d\d bytes of JSON; at most 4,000,000 are allowed/);
    // The same text under fewer entries is taken.
    expect(() => parseCatalogSource(broken((doc) => {
      doc.partners[0].products[0].videos[0].transcript = 'x'.repeat(900_000);
    }))).to.not.throw();
  });

  it('lists every problem of a file, not just the first', function () {
    const problems = problemsOf(broken((d) => {
      d.partners[0].products[0].sku = '';
      d.partners[0].products[2].image = 'ftp://x';
      d.partners[1].name = 42;
    }));
    expect(problems).to.have.length(3);
    expect(problems.join('\n')).to.include('partners[0].products[0].sku').and.include('partners[0].products[2].image').and.include('partners[1].name');
  });

  it('refuses a document that is not JSON, or not an object', function () {
    expect(() => parseCatalogSourceText('{ "format": ')).to.throw(CatalogSourceError, /\$: not valid JSON/);
    expect(problemsOf([])).to.deep.equal(['$: must be an object']);
    expect(problemsOf({ format: 'partner-catalog/v1' })).to.deep.equal(['partners: is required']);
  });
});
