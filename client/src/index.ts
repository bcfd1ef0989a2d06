export { createClient, type CachedLookup, type ClientOptions, type LookupCache, type PartnerCatalogClient } from './client.js';
export { PartnerCatalogError, type ErrorCode, type PartnerCatalogErrorDetails } from './errors.js';
export { jsonForScript, jsonLdScriptFor } from './json-ld-script.js';
export type { LookupResult, PdpEntryView, ProductView, VideoObjectJsonLd, VideoView } from './types.js';
