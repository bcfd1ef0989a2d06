import { expect } from 'chai';
import { productOf } from '../../src/domain/catalog-entries.js';
import { PartnerSchema, type ProductEntry } from '../../src/domain/catalog-format.js';
import type { Product } from '../../src/domain/catalog.js';
import { catalogSourceHash, pdpEntryHash, productHash, ProductsHash, videoHash } from '../../src/domain/content-hashes.js';
import { sandboxCatalogOf } from '../../src/domain/sandbox.js';
import { pathText, SampleMaker, type LeafPath } from '../support/format-leaves.js';

const PRODUCT_ID = 7;

interface PartnerEntry {
  id: string;
  name: string;
  products: ProductEntry[];
  sandbox?: { products: ProductEntry[] } | null;
}

/**
 * The hash of every row an import writes for a partner's one product, made as import-catalog.ts
 * makes them: the product's, each video's by its position, each PDP entry's over the product's and
 * the named video's hashes.
 */
function rowHashes(partner: PartnerEntry): Map<string, string> {
  const product: Product = productOf(partner.products[0]!);
  const content = productHash(partner.id, product);
  const videos = product.videos.map((video, position) => videoHash(partner.id, PRODUCT_ID, position, video));
  const videoByRef = new Map(product.videos.map((video, i) => [video.ref, videos[i]!]));
  const rows = new Map([['product', content]]);
  videos.forEach((hash, i) => rows.set(`videos[${i}]`, hash));
  product.pdpUrls.forEach((entry, position) => {
    const videoContent = entry.videoRef === null ? null : videoByRef.get(entry.videoRef) ?? null;
    rows.set(`pdp_urls[${position}]`, pdpEntryHash(PRODUCT_ID, position, entry, partner.name, content, videoContent));
  });
  return rows;
}

/**
 * The row a field is written in: a video's or a PDP entry's own, else its product's; a field of the
 * partner, any row that holds it ('*'). Null for what is no field of a row: the partner's keys (no
 * answer holds them) and the lists of products, videos and entries themselves (their rows come and go).
 */
function rowOf(path: LeafPath): string | null {
  const [first, index, field] = path;
  // Keys are no rows of a product; a sandbox's products are rows of the sandbox's own catalog, hashed under its id.
  if (first === 'api_keys' || first === 'sandbox') return null;
  if (first !== 'products') return '*';
  if (index === undefined) return null;
  const [, , , position] = path;
  if (field === 'videos' || field === 'pdp_urls') return position === undefined ? null : `${field}[${String(position)}]`;
  return 'product';
}

/** A partner with one product, every field of the format given; nullable fields null when `nulls`; its entry names its video. */
function samplePartner(maker: SampleMaker, nulls: boolean): PartnerEntry {
  const partner = maker.sample(PartnerSchema, nulls) as PartnerEntry;
  const product = partner.products[0]!;
  if (!nulls) product.pdp_urls![0]!.video_ref = product.videos![0]!.ref;
  return partner;
}

describe('content hashes', function () {
  // An import rewrites a row, and rebuilds a product's answer, only where a hash changed: a field
  // left out of its hash would never reach partners when it alone changes.
  for (const nulls of [false, true]) {
    it(`change the hash of the row a field is written in, for every change of every field of the catalog format (${nulls ? 'nullable fields null' : 'every field given'})`, function () {
      const maker = new SampleMaker();
      const partner = samplePartner(maker, nulls);
      const before = rowHashes(partner);
      const missed: string[] = [];
      let checked = 0;
      for (const change of maker.changes(PartnerSchema, partner)) {
        const row = rowOf(change.path);
        if (row === null) continue;
        const after = rowHashes(change.value as PartnerEntry);
        const moved = row === '*' ? [...before].some(([name, hash]) => after.get(name) !== hash) : after.get(row) !== before.get(row);
        if (!moved) missed.push(`${pathText(change.path)} ${change.what}`);
        checked += 1;
      }
      expect(missed, 'changes that left the hash of their row as it was').to.deep.equal([]);
      // The walk reached the fields: every product, video and entry field, changed at least once.
      expect(checked).to.be.above(nulls ? 30 : 50);
    });
  }
});

/** The source hashes an import compares for a partner: its own catalog's, and its sandbox's (its section, or the demo products). */
function sourceHashes(partner: PartnerEntry, demo: readonly Product[]): { live: string; sandbox: string } {
  const hashOf = (catalogId: string, products: readonly Product[]): string => {
    const hash = new ProductsHash();
    for (const product of products) hash.add(product);
    return catalogSourceHash(catalogId, partner.name, hash.digest());
  };
  const section = partner.sandbox?.products.map(productOf) ?? null;
  return { live: hashOf(partner.id, partner.products.map(productOf)), sandbox: hashOf(sandboxCatalogOf(partner.id), section ?? demo) };
}

describe('catalog source hashes', function () {
  // An import leaves a catalog whose source hash is as stored untouched: a field it left out would
  // never reach partners when it alone changes.
  for (const nulls of [false, true]) {
    it(`change the hash of the catalog a field is imported into, for every change of every field but the keys (${nulls ? 'nullable fields null' : 'every field given'})`, function () {
      const maker = new SampleMaker();
      const partner = samplePartner(maker, nulls);
      const demo = [productOf(samplePartner(maker, nulls).products[0]!)];
      const before = sourceHashes(partner, demo);
      const missed: string[] = [];
      let checked = 0;
      for (const change of maker.changes(PartnerSchema, partner)) {
        const [first] = change.path;
        // Keys are in no catalog's rows: they are imported on their own.
        if (first === 'api_keys') continue;
        const after = sourceHashes(change.value as PartnerEntry, demo);
        // A partner's id and name are in both catalogs; a sandbox section's fields in the sandbox's alone.
        const moved = first === 'sandbox' ? after.sandbox !== before.sandbox : after.live !== before.live;
        if (!moved) missed.push(`${pathText(change.path)} ${change.what}`);
        checked += 1;
      }
      expect(missed, 'changes that left their catalog\'s source hash as it was').to.deep.equal([]);
      expect(checked).to.be.above(nulls ? 60 : 100);
    });
  }

  it('tell apart the same products under another catalog or name, and in another order', function () {
    const products = [productOf(samplePartner(new SampleMaker(), false).products[0]!), productOf(samplePartner(new SampleMaker(), true).products[0]!)];
    const hash = (list: readonly Product[]): string => {
      const hashing = new ProductsHash();
      for (const product of list) hashing.add(product);
      return hashing.digest();
    };
    const hashes = [
      catalogSourceHash('acme', 'Acme', hash(products)),
      catalogSourceHash('~acme', 'Acme', hash(products)),
      catalogSourceHash('acme', 'Acme Co.', hash(products)),
      catalogSourceHash('acme', 'Acme', hash([...products].reverse())),
      catalogSourceHash('acme', 'Acme', hash(products.slice(1))),
    ];
    expect(new Set(hashes).size).to.equal(hashes.length);
    expect(catalogSourceHash('acme', 'Acme', hash(products))).to.equal(hashes[0]);
  });
});
