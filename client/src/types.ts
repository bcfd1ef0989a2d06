/*
 * The response shapes of the Partner Catalog Lookup API, under the names this package has always
 * exported. They are generated from the API's OpenAPI document (/openapi.json) into
 * generated/openapi.ts; nothing here is written by hand.
 */
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/** `data` of a lookup: the product as the partner sees it. */
export type LookupResult = Schemas['LookupResult'];
/** The product, with its published videos and its retailer product-page entries. */
export type ProductView = Schemas['Product'];
/** One published video. */
export type VideoView = Schemas['Video'];
/** One retailer product page; its `json_ld` is for that page only. */
export type PdpEntryView = Schemas['PdpEntry'];
/** The schema.org VideoObject for one retailer page, anchored to its `pdp_url`. */
export type VideoObjectJsonLd = Schemas['VideoObject'];
/** A batch lookup's answer: `data`, the products found in the order asked; `not_found`, the values your catalog does not hold. */
export type BatchLookupResponse = Schemas['BatchLookupResponse'];
/** A page of the changes feed. */
export type ChangesResponse = Schemas['ChangesResponse'];
/** One product that changed: `upserted` (look it up again) or `deleted` (drop it). */
export type Change = Schemas['Change'];
