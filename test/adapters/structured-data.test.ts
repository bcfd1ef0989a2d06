import { expect } from 'chai';
import { DEMO_CATALOG_FILE, readCatalogFile } from '../../src/adapters/catalog-file/catalog-file.js';
import { FindingsByShape, shapeOf } from '../../src/adapters/structured-data/findings-by-shape.js';
import { checkStructuredData } from '../../src/adapters/structured-data/google-rules.js';
import { productOf } from '../../src/domain/catalog-entries.js';
import { ProductSchema, type ProductEntry } from '../../src/domain/catalog-format.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { jsonLdOutcome } from '../../src/domain/json-ld.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { replaced, SampleMaker, type LeafPath } from '../support/format-leaves.js';

/** Every generated object of a catalog, with whether its video carries both search-engine fields. */
function objectsOf(catalog: Catalog) {
  return catalog.partners.flatMap((partner) => partner.products.flatMap((product) => product.pdpUrls.flatMap((entry) => {
    const { jsonLd } = jsonLdOutcome(entry, product, partner.name);
    if (jsonLd === null) return [];
    const video = product.videos.find((v) => v.ref === entry.videoRef)!;
    return [{ where: `${partner.id} ${product.sku} ${entry.pdpUrl}`, jsonLd, rich: video.thumbnailUrl !== null && video.uploadDate !== null }];
  })));
}

describe('structured data against Google\'s rules (an independent validator)', function () {
  this.timeout(30_000);

  for (const [name, load] of [['the demo catalog', () => readCatalogFile(DEMO_CATALOG_FILE)], ['the test fixture', () => Promise.resolve(fixtureCatalog())]] as const) {
    it(`finds no error on any rich VideoObject of ${name}, and the two missing fields on each spec-exact one`, async function () {
      const objects = objectsOf(await load());
      expect(objects.length).to.be.greaterThan(0);
      let rich = 0;
      for (const { where, jsonLd, rich: isRich } of objects) {
        const { errors } = await checkStructuredData(jsonLd);
        const onVideo = errors.filter((e) => e.path === '').flatMap((e) => e.fields);
        if (isRich) {
          rich += 1;
          expect(onVideo, where).to.deep.equal([]);
          expect(jsonLd).to.include.keys('thumbnailUrl', 'uploadDate', 'duration');
        } else {
          expect(onVideo, where).to.have.members(['thumbnailUrl', 'uploadDate']);
        }
        // The nested Product has no offers: a catalog has no prices, and the object's shape is fixed.
        expect(errors.filter((e) => e.path !== '').every((e) => e.path === 'about'), where).to.equal(true);
        expect(errors.some((e) => e.path === 'about' && e.fields.includes('offers')), where).to.equal(true);
      }
      if (name === 'the demo catalog') expect(rich, 'rich objects in the demo').to.be.greaterThan(0);
    });
  }
});

/** Values that the validator's rules, and its extraction from a page, might tell apart: set on every string of an object. */
const TELLING_VALUES = [
  '', ' ', 'text', '0', 'NaN', 'USD', '2026-03-14', '2026-03-14T09:00:00+01:00', '2026-02-30', 'PT1M33S', 'P', 'PT',
  'https://cdn.example/v.mp4', 'http://', 'https://exa mple.com/', '//', 'data:video/mp4;base64,AAAA', 'relative/path',
  '</script><script>', '<!-- a', '\u2028', '\u0000', 'a"b\\c', '\ud800',
];

/** Every string of a JSON value, by its path. */
function stringPaths(value: unknown, path: LeafPath = []): LeafPath[] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringPaths(item, [...path, i]));
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([key, child]) => stringPaths(child, [...path, key]));
  return [];
}

/** The objects of a product, a sample of the format with its first entry naming its first video, and of each one-leaf change of it. */
function objectsOfEveryChange(maker: SampleMaker, partnerName: string): object[] {
  const sample = maker.sample(ProductSchema, false) as ProductEntry;
  sample.pdp_urls![0]!.video_ref = sample.videos![0]!.ref;
  sample.videos![0]!.published = true;
  return [sample, ...maker.changes(ProductSchema, sample).map((change) => change.value as ProductEntry)].flatMap((entry) => {
    const product = productOf(entry);
    return product.pdpUrls.flatMap((pdp) => jsonLdOutcome(pdp, product, partnerName).jsonLd ?? []);
  });
}

describe('structured data: findings remembered by the shape of the object', function () {
  this.timeout(120_000);

  /** Each object's findings through the memory, in order, against the validator run on that object alone. */
  async function expectSameFindings(objects: readonly object[]): Promise<FindingsByShape> {
    const byShape = new FindingsByShape(checkStructuredData);
    for (const object of objects) {
      const alone = await checkStructuredData(object);
      expect(await byShape.findings(object), JSON.stringify(object)).to.deep.equal(alone);
    }
    return byShape;
  }

  it('gives every object of a varied catalog the findings the validator gives it alone, running the validator once per shape', async function () {
    const catalog = await readCatalogFile(DEMO_CATALOG_FILE);
    const objects: object[] = [...objectsOf(catalog), ...objectsOf(fixtureCatalog())].map(({ jsonLd }) => jsonLd);
    const maker = new SampleMaker();
    // Every field of the format given, changed, made null, left out, emptied or given one more item, one at a time.
    objects.push(...objectsOfEveryChange(maker, 'Sample Partner'), ...objectsOfEveryChange(maker, ''));
    const byShape = await expectSameFindings(objects);
    expect(objects.length).to.be.greaterThan(100);
    expect(byShape.validatorRuns).to.be.within(2, objects.length / 4);
  });

  it('tells apart every value the rules read: each string of an object set to values dates, durations, URLs and emptiness tell apart', async function () {
    const rich = objectsOf(fixtureCatalog()).find((object) => object.rich) ?? objectsOf(await readCatalogFile(DEMO_CATALOG_FILE)).find((object) => object.rich)!;
    // Also from an object whose every string fails every value rule, so a rule met by either of two properties is seen too.
    const failing = stringPaths(rich.jsonLd).filter((path) => !String(path.at(-1)).startsWith('@'))
      .reduce<unknown>((object, path) => replaced(object, path, () => 'http://'), rich.jsonLd);
    const objects = [rich.jsonLd, failing].flatMap((base) =>
      stringPaths(base).flatMap((path) => TELLING_VALUES.map((text) => replaced(base, path, () => text) as object)));
    const byShape = await expectSameFindings(objects);
    expect(byShape.validatorRuns).to.be.below(objects.length / 2);
  });

  it('forgets the oldest shape past its capacity, and gives the same findings when it meets it again', async function () {
    const { jsonLd } = objectsOf(fixtureCatalog())[0]!;
    let runs = 0;
    const byShape = new FindingsByShape((object) => {
      runs += 1;
      return checkStructuredData(object);
    }, 2);
    const shapes = [jsonLd, { ...jsonLd, name: '' }, { ...jsonLd, description: '' }];
    const first = await byShape.findings(shapes[0]!);
    for (const object of shapes) await byShape.findings(object);
    expect(runs).to.equal(3);
    expect(await byShape.findings(shapes[0]!)).to.deep.equal(first);
    expect(runs).to.equal(4);
  });

  it('keeps the shape of everything the rules read: keys in order, JSON types, emptiness, @type, and the value rules\' verdicts', function () {
    const same = [{ '@type': 'A', a: 'x', b: [1] }, { '@type': 'A', a: 'y', b: [1] }];
    expect(shapeOf(same[0])).to.equal(shapeOf(same[1]));
    for (const other of [
      { '@type': 'B', a: 'x', b: [1] }, { '@type': 'A', a: '', b: [1] }, { '@type': 'A', a: 1, b: [1] }, { '@type': 'A', b: [1], a: 'x' },
      { '@type': 'A', a: 'x', b: [] }, { '@type': 'A', a: 'x', b: [2] }, { '@type': 'A', a: null, b: [1] }, { '@type': 'A', a: 'x', b: [1], c: true },
    ]) expect(shapeOf(other), JSON.stringify(other)).to.not.equal(shapeOf(same[0]));
    expect(shapeOf({ uploadDate: '2026-03-14' })).to.equal(shapeOf({ uploadDate: '2026-03-15T00:00:00Z' }));
    expect(shapeOf({ uploadDate: '2026-03-14' })).to.not.equal(shapeOf({ uploadDate: 'soon' }));
    expect(shapeOf({ duration: 'PT1M' })).to.not.equal(shapeOf({ duration: 'PT' }));
    expect(shapeOf({ contentUrl: 'https://a.example/' })).to.not.equal(shapeOf({ contentUrl: 'data:,x' }));
    expect(shapeOf({ embedUrl: 'https://a.example/' })).to.not.equal(shapeOf({ embedUrl: 'http://' }));
  });
});
