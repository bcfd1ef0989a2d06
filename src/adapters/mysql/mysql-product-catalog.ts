import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { ProductCatalog } from '../../application/ports/product-catalog.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { Database } from './database.js';

type ProductScope = ExpressionBuilder<Database, 'products' | 'product_lookups'>;

/**
 * A product lookup is one statement: the product by a unique index, joined by primary key to the
 * answer the import stored for it, so no lookup aggregates videos and PDP entries, and its cost
 * does not grow with the catalog.
 */
export class MysqlProductCatalog implements ProductCatalog {
  constructor(private readonly db: Kysely<Database>) {}

  findBySku(partnerId: string, sku: Sku): Promise<LookupResult | null> {
    return this.findOne((eb) => eb.and([eb('products.partner_id', '=', partnerId), eb('products.sku', '=', sku)]));
  }

  findById(partnerId: string, id: ProductId): Promise<LookupResult | null> {
    return this.findOne((eb) => eb.and([eb('products.id', '=', id), eb('products.partner_id', '=', partnerId)]));
  }

  private async findOne(where: (eb: ProductScope) => Expression<SqlBool>): Promise<LookupResult | null> {
    const row = await this.db
      .selectFrom('products')
      .leftJoin('product_lookups', 'product_lookups.product_id', 'products.id')
      .select(['products.id', 'product_lookups.lookup'])
      .where(where)
      .executeTakeFirst();
    if (row === undefined) return null;
    // Every import and the migration that added the table write one per product: none means the schema is behind.
    if (row.lookup === null) throw new Error(`product ${row.id} has no stored lookup answer; run the migrate command`);
    return row.lookup;
  }
}
