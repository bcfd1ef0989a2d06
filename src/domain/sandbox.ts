import { hash } from 'node:crypto';

/*
 * A partner's sandbox: the catalog its test keys read (docs/api.md, test keys). It is stored, cached,
 * announced and fed exactly as a live catalog is, under a catalog id of its own.
 */

/** The longest partner id (catalog files); a sandbox's catalog id is never longer, so it fits where a partner id does. */
const MAX_PARTNER_ID_LENGTH = 63;
/** Partner ids are lowercase letters, digits and "-": an id starting with "~" is never a partner's own. */
const SANDBOX_MARK = '~';

/**
 * The catalog id of a partner's sandbox: readable ("~acme") for every partner id but one of the
 * full 63 characters, which would not fit: that one is named by 248 bits of its SHA-256.
 */
export function sandboxCatalogOf(partnerId: string): string {
  return partnerId.length < MAX_PARTNER_ID_LENGTH
    ? SANDBOX_MARK + partnerId
    : SANDBOX_MARK + hash('sha256', partnerId, 'hex').slice(0, MAX_PARTNER_ID_LENGTH - SANDBOX_MARK.length);
}

/** Whether a catalog id names a sandbox, which no operator command or portal page may take for a partner. */
export function isSandboxCatalog(catalogId: string): boolean {
  return catalogId.startsWith(SANDBOX_MARK);
}

/**
 * The SKUs a test key asks for to see an error a client must handle, answered as the real error is.
 * A sandbox may not hold a product under one of them; to a live key they are SKUs like any other.
 */
export const SANDBOX_ERROR_SKUS = ['TEST-404', 'TEST-429', 'TEST-503'] as const;
export type SandboxErrorSku = (typeof SANDBOX_ERROR_SKUS)[number];

export function isSandboxErrorSku(sku: string): sku is SandboxErrorSku {
  return (SANDBOX_ERROR_SKUS as readonly string[]).includes(sku);
}
