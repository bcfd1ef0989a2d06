import type { LookupAnswer } from '../../domain/lookup-answer.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';

/** Read access to partners' catalogs; every lookup is scoped to one partner. */
export interface ProductCatalog {
  /** The product with exactly this SKU (case-sensitive) in the partner's catalog, or null. */
  findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null>;
  /** The product with this ID if it belongs to the partner's catalog, else null. */
  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null>;
  /** `findBySku` of each SKU, read together: the answers in the SKUs' order, null where there is none. */
  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]>;
  /** `findById` of each ID, read together: the answers in the IDs' order, null where there is none. */
  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]>;
}
