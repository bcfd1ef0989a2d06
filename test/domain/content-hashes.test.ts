import { expect } from 'chai';
import { productOf } from '../../src/domain/catalog-entries.js';
import { PartnerSchema, type ProductEntry } from '../../src/domain/catalog-format.js';
import type { Product } from '../../src/domain/catalog.js';
import { pdpEntryHash, productHash, videoHash } from '../../src/domain/content-hashes.js';
import { pathText, SampleMaker, type LeafPath } from '../support/format-leaves.js';

const PRODUCT_ID = 7;

interface PartnerEntry {
  id: string;
  name: string;
  products: ProductEntry[];
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
