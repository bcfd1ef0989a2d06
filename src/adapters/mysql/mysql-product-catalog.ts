import { sql, type Kysely } from 'kysely';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import { LookupAnswer } from '../../domain/lookup-answer.js';
import { MAX_BATCH_VALUES } from '../../domain/lookup-batch.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { Database } from './database.js';
import { prepareQuery } from './prepared-query.js';

type AnswerRow = { id: number; etag: string | null; lookup: Uint8Array | null };

/** Distinct placeholders for a statement's list of values: each must appear once among its parameters. */
const listOf = <T>(placeholder: (i: number) => T): T[] => Array.from({ length: MAX_BATCH_VALUES }, (_, i) => placeholder(i));

/**
 * A product lookup is one statement: the product by a unique index, joined by primary key to the
 * answer the import stored for it, so no lookup aggregates videos and PDP entries, and its cost
 * does not grow with the catalog. The answer is read as the bytes the import wrote, beside the
 * ETag it wrote with them, and sent as they are: a miss parses and writes no JSON, and hashes nothing.
 * Many lookups are one statement for each MAX_BATCH_VALUES of them, by the same index.
 */
export class MysqlProductCatalog implements ProductCatalog {
  private readonly bySku;
  private readonly byId;
  private readonly bySkus;
  private readonly byIds;

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
    // One statement text, prepared once, for any number of values up to the bound: a shorter list repeats its last value.
    this.bySkus = prepareQuery(
      db,
      (partnerId: string, ...skus: string[]) => answers().select('products.sku').where('products.partner_id', '=', partnerId).where('products.sku', 'in', skus),
      ['<partner>', ...listOf((i) => `<sku ${i}>`)],
      { onServer: true },
    );
    this.byIds = prepareQuery(
      db,
      (partnerId: string, ...ids: number[]) => answers().where('products.id', 'in', ids).where('products.partner_id', '=', partnerId),
      ['<partner>', ...listOf((i) => -1 - i)],
      { onServer: true },
    );
  }

  async findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return answerOf(await this.bySku(partnerId, sku));
  }

  async findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return answerOf(await this.byId(partnerId, id));
  }

  async findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    const rows = new Map<string, AnswerRow>();
    for (const chunk of chunks(skus)) for (const row of await this.bySkus(partnerId, ...chunk)) rows.set(row.sku, row);
    return skus.map((sku) => answerOf([rows.get(sku)]));
  }

  async findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    const rows = new Map<number, AnswerRow>();
    for (const chunk of chunks(ids)) for (const row of await this.byIds(partnerId, ...chunk)) rows.set(row.id, row);
    return ids.map((id) => answerOf([rows.get(id)]));
  }
}

/** The values in lists of exactly MAX_BATCH_VALUES, the last one filled up with its own last value. */
function* chunks<T>(values: readonly T[]): Generator<T[]> {
  for (let start = 0; start < values.length; start += MAX_BATCH_VALUES) {
    const chunk = values.slice(start, start + MAX_BATCH_VALUES);
    yield [...chunk, ...Array<T>(MAX_BATCH_VALUES - chunk.length).fill(chunk.at(-1)!)];
  }
}

function answerOf([row]: readonly (AnswerRow | undefined)[]): LookupAnswer | null {
  if (row === undefined) return null;
  // Every import and the migration that added the table write one per product: none means the schema is behind.
  if (row.lookup === null) throw new Error(`product ${row.id} has no stored lookup answer; run the migrate command`);
  if (row.etag !== null) return LookupAnswer.ofStoredText(row.lookup, row.etag);
  // The migration that built the answers wrote no ETag, nor compact text: until the next import
  // rewrites it, such an answer is written again here, and held in the same form as the others.
  return LookupAnswer.ofResultText(JSON.stringify(JSON.parse(Buffer.from(row.lookup).toString('utf8')) as LookupResult));
}
