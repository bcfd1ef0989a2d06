import { DomainError } from '../../domain/errors.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import { parseSku } from '../../domain/sku.js';
import type { ProductCatalog } from './product-catalog.js';

export class LookupBySku {
  constructor(private readonly catalog: ProductCatalog) {}

  async execute(input: { partnerId: string; sku: string }): Promise<LookupResult> {
    const sku = parseSku(input.sku);
    const result = await this.catalog.findBySku(input.partnerId, sku);
    if (result === null) throw new DomainError('sku_not_found', `No product with SKU "${sku}" in your catalog.`);
    return result;
  }
}
