import { Type, type Static } from 'typebox';
import type { ProductChange } from './changes.js';

/*
 * What the changes feed answers, declared once: the types below and the OpenAPI document's schemas
 * (and through it the client's types) come from these declarations (docs/api.md, the changes feed).
 */

/** Cursors are opaque to partners, who may rely on this bound and no other property. */
export const MAX_CURSOR_LENGTH = 64;

export const ChangeViewSchema = Type.Object({
  sku: Type.String({ pattern: '^[A-Za-z0-9._-]{1,50}$', description: 'The product\'s SKU in your catalog.' }),
  product_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The product\'s service-assigned ID, as `data.product.id` of its lookup.' }),
  change: Type.Enum(['upserted', 'deleted'], {
    type: 'string',
    description: '`upserted`: the product is in your catalog and its lookup answer is new or changed. `deleted`: it left your catalog.',
  }),
  etag: Type.Union([Type.String({ pattern: '^"[\\x21\\x23-\\x7e]*"$' }), Type.Null()], {
    description: 'The `ETag` a lookup of the product answers with now; `null` when it is deleted. When it equals the `ETag` you kept, your copy is already current.',
  }),
  changed_at: Type.String({
    format: 'date-time',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$',
    description: 'When the import that made this change ran, in UTC.',
  }),
}, { additionalProperties: false });

/** A page of the feed, oldest change first. */
export const ChangesResponseSchema = Type.Object({
  data: Type.Array(ChangeViewSchema, { description: 'At most `limit` changes, oldest first; each product at most once, at its latest change.' }),
  next_cursor: Type.String({ minLength: 1, maxLength: MAX_CURSOR_LENGTH, description: 'Always present: send it as `cursor` next time, whether this page was full or empty.' }),
  has_more: Type.Boolean({ description: '`true`: more changes are waiting; ask again with `next_cursor` now.' }),
}, { additionalProperties: false });

export type ChangeView = Static<typeof ChangeViewSchema>;
export type ChangesResponse = Static<typeof ChangesResponseSchema>;

/** One change as the feed lists it, keys in the documented order. */
export function toChangeView(change: ProductChange): ChangeView {
  return {
    sku: change.sku,
    product_id: change.productId,
    change: change.change,
    etag: change.etag,
    changed_at: change.changedAt.toISOString(),
  };
}
