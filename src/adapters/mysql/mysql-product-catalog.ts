import type { Kysely } from 'kysely';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { Database } from './database.js';
import { prepareQuery } from './prepared-query.js';

/**
 * A product lookup is one statement: the product by a unique index, joined by primary key to the
 * answer the import stored for it, so no lookup aggregates videos and PDP entries, and its cost
 * does not grow with the catalog.
 */
export class MysqlProductCatalog implements ProductCatalog {
  private readonly bySku;
  private readonly byId;

  constructor(db: Kysely<Database>) {
    const answers = () => db
      .selectFrom('products')
      .leftJoin('product_lookups', 'product_lookups.product_id', 'products.id')
      .select(['products.id', 'product_lookups.lookup']);
    this.bySku = prepareQuery(
      db,
      (partnerId: string, sku: string) => answers().where('products.partner_id', '=', partnerId).where('products.sku', '=', sku),
      ['<partner>', '<sku>'],
      { onServer: true },
    );
    this.byId = prepareQuery(
      db,
      (partnerId: string, id: number) => answers().where('products.id', '=', id).where('products.partner_id', '=', partnerId),
      ['<partner>', -1],
      { onServer: true },
    );
  }

  async findBySku(partnerId: string, sku: Sku): Promise<LookupResult | null> {
    return answerOf(await this.bySku(partnerId, sku));
  }

  async findById(partnerId: string, id: ProductId): Promise<LookupResult | null> {
    return answerOf(await this.byId(partnerId, id));
  }
}

function answerOf([row]: readonly { id: number; lookup: LookupResult | null }[]): LookupResult | null {
  if (row === undefined) return null;
  // Every import and the migration that added the table write one per product: none means the schema is behind.
  if (row.lookup === null) throw new Error(`product ${row.id} has no stored lookup answer; run the migrate command`);
  return row.lookup;
}
