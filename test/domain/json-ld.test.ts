import { expect } from 'chai';
import fc from 'fast-check';
import type { PdpEntry, Product, Video } from '../../src/domain/catalog.js';
import { generateJsonLd } from '../../src/domain/json-ld.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';

const tent = (): Product => fixtureCatalog().partners[0]!.products[0]!;
const withVideo = (product: Product, video: Partial<Video>): Product => ({
  ...product,
  videos: product.videos.map((v) => (v.ref === 'tent-pitch' ? { ...v, ...video } : v)),
});
const entry = (overrides: Partial<PdpEntry> = {}): PdpEntry => ({
  pdpUrl: 'https://shop.example/p/1', retailer: 'Shop', videoRef: 'tent-pitch', videoFileUrl: 'https://cdn.example/1.mp4', ...overrides,
});

describe('JSON-LD generation', function () {
  it('anchors every page reference to the entry\'s pdp_url, for any URL and any video text', function () {
    fc.assert(fc.property(fc.webUrl(), fc.webUrl(), fc.string(), fc.string({ minLength: 1 }), (pageUrl, fileUrl, name, transcript) => {
      const ld = generateJsonLd(entry({ pdpUrl: pageUrl, videoFileUrl: fileUrl }), withVideo(tent(), { name, transcript }), 'Acme')!;
      expect([ld['@id'], ld.embedUrl, ld.isPartOf['@id'], ld.isPartOf.url, ld.about['@id']]).to.deep.equal(Array(5).fill(pageUrl));
      expect(ld.contentUrl).to.equal(fileUrl);
      expect(ld.transcript).to.equal(transcript);
      expect(ld.name).to.equal(name);
    }));
  });

  it('is null unless a published video with a non-empty transcript and a file URL is named', function () {
    expect(generateJsonLd(entry(), tent(), 'Acme')).to.not.equal(null);
    expect(generateJsonLd(entry({ videoRef: null }), tent(), 'Acme')).to.equal(null);
    expect(generateJsonLd(entry({ videoFileUrl: null }), tent(), 'Acme')).to.equal(null);
    expect(generateJsonLd(entry(), withVideo(tent(), { transcript: null }), 'Acme')).to.equal(null);
    expect(generateJsonLd(entry(), withVideo(tent(), { transcript: '' }), 'Acme')).to.equal(null);
    expect(generateJsonLd(entry(), withVideo(tent(), { published: false }), 'Acme')).to.equal(null);
  });

  it('falls back to the product title and short description', function () {
    const ld = generateJsonLd(entry(), withVideo(tent(), { name: null, description: null }), 'Acme')!;
    expect(ld).to.include({ name: 'Title TENT-2P', description: 'Short TENT-2P' });
  });

  it('does not share arrays with the catalog, so a caller cannot change the source through it', function () {
    const product = tent();
    const ld = generateJsonLd(entry(), product, 'Acme')!;
    ld.keywords.push('changed');
    expect(product.videos[0]!.keywords).to.deep.equal(['tent', 'camping']);
  });
});
