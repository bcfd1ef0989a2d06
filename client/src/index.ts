export { createClient, type CachedLookup, type ChangeFeed, type ChangesOptions, type ClientOptions, type LookupCache, type PartnerCatalogClient, type ProductBatch } from './client.js';
export { PartnerCatalogError, type ErrorCode, type PartnerCatalogErrorDetails } from './errors.js';
export { jsonForScript, jsonLdScriptFor } from './json-ld-script.js';
export type { BatchLookupResponse, Change, ChangesResponse, LookupResult, PdpEntryView, ProductView, VideoObjectJsonLd, VideoView } from './types.js';
