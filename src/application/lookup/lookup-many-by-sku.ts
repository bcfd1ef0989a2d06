import { LookupBatch, parseBatch } from '../../domain/lookup-batch.js';
import { parseSku } from '../../domain/sku.js';
import type { ProductCatalog } from './product-catalog.js';

export class LookupManyBySku {
  constructor(private readonly catalog: ProductCatalog) {}

  async execute(input: { partnerId: string; skus: readonly string[] }): Promise<LookupBatch> {
    const skus = parseBatch(input.skus, parseSku);
    return LookupBatch.of(skus, await this.catalog.findManyBySku(input.partnerId, skus));
  }
}
