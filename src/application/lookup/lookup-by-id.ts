import { DomainError } from '../../domain/errors.js';
import type { LookupAnswer } from '../../domain/lookup-answer.js';
import { parseProductId } from '../../domain/product-id.js';
import type { ProductCatalog } from './product-catalog.js';

export class LookupById {
  constructor(private readonly catalog: ProductCatalog) {}

  async execute(input: { partnerId: string; id: string }): Promise<LookupAnswer> {
    const id = parseProductId(input.id);
    const answer = await this.catalog.findById(input.partnerId, id);
    if (answer === null) throw new DomainError('product_not_found', `No product with ID ${id} in your catalog.`);
    return answer;
  }
}
