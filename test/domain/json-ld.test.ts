import { expect } from 'chai';
import fc from 'fast-check';
import type { PdpEntry, Product, Video } from '../../src/domain/catalog.js';
import { isoDuration } from '../../src/domain/iso-duration.js';
import { generateJsonLd, jsonLdOutcome, type VideoObjectJsonLd } from '../../src/domain/json-ld.js';
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

describe('JSON-LD for search engines', function () {
  const searchable = { thumbnailUrl: 'https://img.example/t/pitch.jpg', uploadDate: '2026-03-14T09:00:00+01:00' };
  const SEARCH_KEYS = ['thumbnailUrl', 'uploadDate', 'duration'];
  const ABOUT_KEYS = ['name', 'image'];

  /** The object serialized with the search-engine keys left out, key order kept. */
  const withoutSearchKeys = (ld: VideoObjectJsonLd): string => JSON.stringify(ld, function (this: unknown, key: string, value: unknown) {
    if (this === ld && SEARCH_KEYS.includes(key)) return undefined;
    if (this === ld.about && ABOUT_KEYS.includes(key)) return undefined;
    return value;
  });

  it('adds thumbnailUrl, uploadDate, duration and about.name and image when the video has both fields', function () {
    const ld = generateJsonLd(entry(), withVideo(tent(), searchable), 'Acme')!;
    expect(ld).to.include({ thumbnailUrl: searchable.thumbnailUrl, uploadDate: searchable.uploadDate, duration: 'PT1M33S' });
    expect(ld.about).to.include({ name: 'Title TENT-2P', image: 'https://img.example/TENT-2P.jpg' });
    expect(Object.keys(ld)).to.deep.equal([
      '@context', '@type', '@id', 'name', 'description', 'thumbnailUrl', 'uploadDate', 'duration', 'transcript', 'inLanguage',
      'isFamilyFriendly', 'contentUrl', 'embedUrl', 'genre', 'keywords', 'creator', 'publisher', 'about', 'isPartOf',
    ]);
    expect(Object.keys(ld.about)).to.deep.equal(['@type', '@id', 'name', 'image', 'brand', 'additionalProperty']);
  });

  it('keeps exactly the specification\'s keys, in their order, when the video lacks either field', function () {
    const plain = JSON.stringify(generateJsonLd(entry(), tent(), 'Acme'));
    for (const partial of [{ thumbnailUrl: searchable.thumbnailUrl }, { uploadDate: searchable.uploadDate }, {}]) {
      expect(JSON.stringify(generateJsonLd(entry(), withVideo(tent(), partial), 'Acme')), JSON.stringify(partial)).to.equal(plain);
    }
    expect(Object.keys(JSON.parse(plain) as object)).to.deep.equal([
      '@context', '@type', '@id', 'name', 'description', 'transcript', 'inLanguage', 'isFamilyFriendly', 'contentUrl',
      'embedUrl', 'genre', 'keywords', 'creator', 'publisher', 'about', 'isPartOf',
    ]);
  });

  it('is the specification\'s object plus exactly the listed keys, for any video, product and page', function () {
    fc.assert(fc.property(
      fc.webUrl(), fc.webUrl(), fc.string(), fc.double({ min: 0, max: 1e7, noNaN: true }), fc.webUrl(), fc.string(),
      (pageUrl, thumbnailUrl, uploadDate, length, image, title) => {
        const product = { ...withVideo(tent(), { length }), image, title };
        const plain = generateJsonLd(entry({ pdpUrl: pageUrl }), product, 'Acme')!;
        const rich = generateJsonLd(entry({ pdpUrl: pageUrl }), withVideo(product, { thumbnailUrl, uploadDate }), 'Acme')!;
        expect(Object.keys(rich).filter((key) => !(key in plain))).to.deep.equal(SEARCH_KEYS);
        expect(Object.keys(rich.about).filter((key) => !(key in plain.about))).to.deep.equal(ABOUT_KEYS);
        expect(withoutSearchKeys(rich)).to.equal(JSON.stringify(plain));
        expect(rich).to.include({ thumbnailUrl, uploadDate, duration: isoDuration(length) });
        expect(rich.about).to.include({ name: title, image });
      },
    ));
  });
});

describe('why an entry has no JSON-LD', function () {
  const reasonOf = (e: PdpEntry, product: Product = tent()) => jsonLdOutcome(e, product, 'Acme').reason;

  it('names the first thing missing: video_ref, then a published video, then its transcript, then the file URL', function () {
    expect(jsonLdOutcome(entry(), tent(), 'Acme')).to.deep.equal({ jsonLd: generateJsonLd(entry(), tent(), 'Acme'), reason: null });
    expect(reasonOf(entry({ videoRef: null, videoFileUrl: null }))).to.equal('no_video_ref');
    expect(reasonOf(entry({ videoRef: 'tent-draft', videoFileUrl: null }))).to.equal('video_unpublished');
    expect(reasonOf(entry({ videoFileUrl: null }), withVideo(tent(), { published: false, transcript: null }))).to.equal('video_unpublished');
    expect(reasonOf(entry({ videoRef: 'not-a-video' }))).to.equal('video_unpublished');
    expect(reasonOf(entry({ videoRef: 'tent-fold', videoFileUrl: null }))).to.equal('no_transcript');
    expect(reasonOf(entry(), withVideo(tent(), { transcript: '' }))).to.equal('no_transcript');
    expect(reasonOf(entry({ videoFileUrl: null }))).to.equal('no_video_file_url');
  });

  it('gives a reason exactly when there is no object, for any combination', function () {
    fc.assert(fc.property(
      fc.constantFrom(null, 'tent-pitch', 'tent-draft', 'tent-fold'), fc.option(fc.webUrl()), fc.option(fc.string()), fc.boolean(),
      (videoRef, videoFileUrl, transcript, published) => {
        const outcome = jsonLdOutcome(entry({ videoRef, videoFileUrl }), withVideo(tent(), { transcript, published }), 'Acme');
        expect(outcome.jsonLd === null).to.equal(outcome.reason !== null);
      },
    ));
  });
});

describe('ISO 8601 duration', function () {
  const DURATION = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/;
  const secondsOf = (duration: string): bigint => {
    const match = DURATION.exec(duration);
    if (match === null || duration === 'PT') throw new Error(`not an ISO 8601 duration in whole seconds: ${duration}`);
    const [hours, minutes, seconds] = [1, 2, 3].map((i) => BigInt(match[i] ?? '0')) as [bigint, bigint, bigint];
    expect(minutes < 60n && seconds < 60n, duration).to.equal(true);
    return hours * 3600n + minutes * 60n + seconds;
  };

  it('writes the documented examples', function () {
    const examples: [number, string][] = [
      [92.5, 'PT1M33S'], [30, 'PT30S'], [3600, 'PT1H'], [3661, 'PT1H1M1S'], [0, 'PT0S'],
      [0.49, 'PT0S'], [0.5, 'PT1S'], [59.5, 'PT1M'], [3599.5, 'PT1H'], [7200.2, 'PT2H'], [-0, 'PT0S'],
      [1e21, 'PT277777777777777777H46M40S'],
    ];
    for (const [length, duration] of examples) expect(isoDuration(length), String(length)).to.equal(duration);
  });

  it('parses back to the length rounded half up to whole seconds, for any non-negative length', function () {
    const lengths = fc.oneof(
      fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true }),
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      fc.nat().map((n) => n + 0.5),
      fc.nat(),
    );
    fc.assert(fc.property(lengths, (length) => {
      const whole = secondsOf(isoDuration(length));
      // `whole` is the one integer with whole - 0.5 <= length < whole + 0.5.
      const offset = length - Number(whole);
      expect(offset >= -0.5 && offset < 0.5, `${length} -> ${whole}`).to.equal(true);
    }), { numRuns: 2000 });
  });

  it('refuses what is not a duration', function () {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => isoDuration(bad)).to.throw(RangeError);
  });
});
