import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import type { ProductCatalog } from '../../application/ports/product-catalog.js';
import type { LookupResult, PdpEntryView, VideoView } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { Database } from './database.js';

type ProductScope = ExpressionBuilder<Database, 'products'>;

/** Published videos in catalog order, as one JSON array built by the database. */
const videosOf = (eb: ProductScope) =>
  eb.selectFrom('videos')
    .select(sql<VideoView[]>`coalesce(json_arrayagg(json_object(
      'id', videos.id, 'name', videos.name, 'aspect_ratio', videos.aspect_ratio, 'length', videos.length
    ) order by videos.position), json_array())`.as('list'))
    .whereRef('videos.product_id', '=', 'products.id')
    .where('videos.published', '=', 1);

/** PDP entries in catalog order, each with the JSON-LD stored at import. */
const pdpEntriesOf = (eb: ProductScope) =>
  eb.selectFrom('pdp_entries')
    .select(sql<PdpEntryView[]>`coalesce(json_arrayagg(json_object(
      'id', pdp_entries.id, 'pdp_url', pdp_entries.pdp_url, 'video_file_url', pdp_entries.video_file_url,
      'retailer', pdp_entries.retailer, 'json_ld', pdp_entries.json_ld
    ) order by pdp_entries.position), json_array())`.as('list'))
    .whereRef('pdp_entries.product_id', '=', 'products.id');

/**
 * A product lookup is one statement: the product row with its videos and PDP entries
 * aggregated by correlated subqueries (MariaDB cannot run Kysely's jsonArrayFrom).
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
      .select([
        'products.id', 'products.sku', 'products.status', 'products.title', 'products.description',
        'products.short_description', 'products.image', 'products.what_text', 'products.who_text', 'products.why_text',
      ])
      .select((eb) => [videosOf(eb).as('videos'), pdpEntriesOf(eb).as('pdp_urls')])
      .where(where)
      .executeTakeFirst();
    if (row === undefined) return null;
    return {
      sku: row.sku,
      status: row.status,
      product: {
        id: row.id,
        title: row.title,
        description: row.description,
        short_description: row.short_description,
        image: row.image,
        what_text: row.what_text,
        who_text: row.who_text,
        why_text: row.why_text,
        videos: row.videos ?? [],
        pdp_urls: row.pdp_urls ?? [],
      },
    };
  }
}
