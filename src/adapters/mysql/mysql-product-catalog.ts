import { sql, type Kysely } from 'kysely';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import { LookupAnswer } from '../../domain/lookup-answer.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { Database } from './database.js';
import { prepareQuery } from './prepared-query.js';

/**
 * A product lookup is one statement: the product by a unique index, joined by primary key to the
 * answer the import stored for it, so no lookup aggregates videos and PDP entries, and its cost
 * does not grow with the catalog. The answer is read as the bytes the import wrote, beside the
 * ETag it wrote with them, and sent as they are: a miss parses and writes no JSON, and hashes nothing.
 */
export class MysqlProductCatalog implements ProductCatalog {
  private readonly bySku;
  private readonly byId;

  constructor(db: Kysely<Database>) {
    const answers = () => db
      .selectFrom('products')
      .leftJoin('product_lookups', 'product_lookups.product_id', 'products.id')
      // As bytes: the driver would otherwise decode the text and parse it (MariaDB marks the column JSON).
      .select(['products.id', 'product_lookups.etag', sql<Uint8Array | null>`cast(product_lookups.lookup as binary)`.as('lookup')]);
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

  async findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return answerOf(await this.bySku(partnerId, sku));
  }

  async findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return answerOf(await this.byId(partnerId, id));
  }
}

function answerOf([row]: readonly { id: number; etag: string | null; lookup: Uint8Array | null }[]): LookupAnswer | null {
  if (row === undefined) return null;
  // Every import and the migration that added the table write one per product: none means the schema is behind.
  if (row.lookup === null) throw new Error(`product ${row.id} has no stored lookup answer; run the migrate command`);
  if (row.etag !== null) return LookupAnswer.ofStoredText(row.lookup, row.etag);
  // The migration that built the answers wrote no ETag, nor compact text: until the next import
  // rewrites it, such an answer is written again here, and held in the same form as the others.
  return LookupAnswer.ofResultText(JSON.stringify(JSON.parse(Buffer.from(row.lookup).toString('utf8')) as LookupResult));
}
