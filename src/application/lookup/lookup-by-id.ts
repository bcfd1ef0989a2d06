import { DomainError } from '../../domain/errors.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import { parseProductId } from '../../domain/product-id.js';
import type { ProductCatalog } from './product-catalog.js';

export class LookupById {
  constructor(private readonly catalog: ProductCatalog) {}

  async execute(input: { partnerId: string; id: string }): Promise<LookupResult> {
    const id = parseProductId(input.id);
    const result = await this.catalog.findById(input.partnerId, id);
    if (result === null) throw new DomainError('product_not_found', `No product with ID ${id} in your catalog.`);
    return result;
  }
}
