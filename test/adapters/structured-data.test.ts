import { expect } from 'chai';
import { DEMO_CATALOG_FILE, readCatalogFile } from '../../src/adapters/catalog-file/catalog-file.js';
import { checkStructuredData } from '../../src/adapters/structured-data/google-rules.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { jsonLdOutcome } from '../../src/domain/json-ld.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';

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
