import { LookupBatch, parseBatch } from '../../domain/lookup-batch.js';
import { parseProductId } from '../../domain/product-id.js';
import type { ProductCatalog } from './product-catalog.js';

export class LookupManyById {
  constructor(private readonly catalog: ProductCatalog) {}

  async execute(input: { partnerId: string; ids: readonly string[] }): Promise<LookupBatch> {
    const ids = parseBatch(input.ids, parseProductId);
    return LookupBatch.of(ids, await this.catalog.findManyById(input.partnerId, ids));
  }
}
