export { createClient, DEPRECATED_OPERATION_WARNING, type CachedLookup, type ChangeFeed, type ChangesOptions, type ClientOptions, type DeprecationNotice, type LookupCache, type OperationId, type PartnerCatalogClient, type ProductBatch } from './client.js';
export { PartnerCatalogError, type ErrorCode, type PartnerCatalogErrorDetails } from './errors.js';
export { jsonForScript, jsonLdScriptFor } from './json-ld-script.js';
export type { BatchLookupResponse, Change, ChangesResponse, LookupResult, PdpEntryView, ProductView, VideoObjectJsonLd, VideoView } from './types.js';
