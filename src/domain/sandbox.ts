import { hash } from 'node:crypto';
import type { DomainErrorCode } from './errors.js';

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
 * The SKUs a test key asks for to see an error a client must handle (docs/api.md, test keys), each
 * declared with the code it is answered with: its status and message are the real error's, and its
 * number is that status. The HTTP adapter raises each code as the real one is raised, so a SKU
 * cannot be added without its answer. A sandbox may not hold a product under one of them; to a
 * live key they are SKUs like any other.
 */
export const SANDBOX_ERROR_ANSWERS = {
  /** Not found, as any SKU the sandbox lacks: no sandbox holds a product under it. */
  'TEST-404': 'sku_not_found',
  /** The key's own window spent, with the window's real figures. */
  'TEST-429': 'rate_limit_exceeded',
  /** Storage out of reach, without reading it. */
  'TEST-503': 'service_unavailable',
} as const satisfies Record<`TEST-${number}`, DomainErrorCode>;

export type SandboxErrorSku = keyof typeof SANDBOX_ERROR_ANSWERS;
export type SandboxErrorCode = (typeof SANDBOX_ERROR_ANSWERS)[SandboxErrorSku];

export const SANDBOX_ERROR_SKUS = Object.keys(SANDBOX_ERROR_ANSWERS) as readonly SandboxErrorSku[];

export function isSandboxErrorSku(sku: string): sku is SandboxErrorSku {
  return (SANDBOX_ERROR_SKUS as readonly string[]).includes(sku);
}
