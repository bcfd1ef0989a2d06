import type { ProductCatalog } from '../../src/application/lookup/product-catalog.js';
import type { Catalog } from '../../src/domain/catalog.js';
import { LookupAnswer } from '../../src/domain/lookup-answer.js';
import { toLookupResult } from '../../src/domain/lookup-result.js';
import type { ProductId } from '../../src/domain/product-id.js';
import type { Sku } from '../../src/domain/sku.js';

interface Entry {
  readonly partnerId: string;
  readonly answer: LookupAnswer;
}

/**
 * A whole catalog held in process, built at once from a validated catalog: for tests that need
 * one without an import (deployments use `MemoryCatalogStore`, which imports).
 * IDs are assigned in file order, so the same file gives the same IDs at every start.
 */
export class MemoryProductCatalog implements ProductCatalog {
  private readonly bySku = new Map<string, Map<string, LookupAnswer>>();
  private readonly byId = new Map<number, Entry>();

  constructor(catalog: Catalog) {
    let productId = 0;
    let videoId = 0;
    let pdpId = 0;
    for (const partner of catalog.partners) {
      const skus = new Map<string, LookupAnswer>();
      this.bySku.set(partner.id, skus);
      for (const product of partner.products) {
        const ids = {
          product: (productId += 1),
          videos: product.videos.map(() => (videoId += 1)),
          pdpUrls: product.pdpUrls.map(() => (pdpId += 1)),
        };
        const answer = LookupAnswer.ofResult(toLookupResult(product, ids, partner.name));
        skus.set(product.sku, answer);
        this.byId.set(ids.product, { partnerId: partner.id, answer });
      }
    }
  }

  findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return Promise.resolve(this.bySku.get(partnerId)?.get(sku) ?? null);
  }

  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return Promise.resolve(this.answerById(partnerId, id));
  }

  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    return Promise.resolve(skus.map((sku) => this.bySku.get(partnerId)?.get(sku) ?? null));
  }

  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    return Promise.resolve(ids.map((id) => this.answerById(partnerId, id)));
  }

  private answerById(partnerId: string, id: ProductId): LookupAnswer | null {
    const entry = this.byId.get(id);
    return entry?.partnerId === partnerId ? entry.answer : null;
  }
}

