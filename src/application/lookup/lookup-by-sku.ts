import { DomainError } from '../../domain/errors.js';
import type { LookupAnswer } from '../../domain/lookup-answer.js';
import { parseSku } from '../../domain/sku.js';
import type { ProductCatalog } from './product-catalog.js';

export class LookupBySku {
  constructor(private readonly catalog: ProductCatalog) {}

  async execute(input: { partnerId: string; sku: string }): Promise<LookupAnswer> {
    const sku = parseSku(input.sku);
    const answer = await this.catalog.findBySku(input.partnerId, sku);
    if (answer === null) throw new DomainError('sku_not_found', `No product with SKU "${sku}" in your catalog.`);
    return answer;
  }
}
