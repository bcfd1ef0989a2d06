import type { Principal } from '../../domain/api-key.js';
import { DomainError, ServiceUnavailable } from '../../domain/errors.js';
import { isSandboxErrorSku, SANDBOX_ERROR_ANSWERS, type SandboxErrorCode } from '../../domain/sandbox.js';
import { TIMEOUTS } from '../timeouts.js';

/*
 * The errors a test key asks for by SKU (docs/api.md, test keys), answered as the real ones are and
 * costing nothing real: no storage read, no count beyond the request's own.
 */

/**
 * A test key asked for `TEST-429`. The pipeline answers it as the count answers a spent window: the
 * same body, with `Retry-After` and the rate-limit fields of the key's own window, none left.
 */
export class SandboxRateLimitAsked extends DomainError {
  constructor() {
    super('rate_limit_exceeded', 'TEST-429');
    this.name = 'SandboxRateLimitAsked';
  }
}

/**
 * Each code a test key may ask for (sandbox.ts), raised as the real error is; null where the lookup
 * itself gives the real answer.
 */
const REFUSAL_BY_CODE: Readonly<Record<SandboxErrorCode, (() => DomainError) | null>> = {
  // A sandbox never holds a product under its SKU: not found as any unknown SKU is, in a batch one more value not found.
  sku_not_found: null,
  rate_limit_exceeded: () => new SandboxRateLimitAsked(),
  service_unavailable: () => new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds),
};

/** Throws the error the first of the SKUs asks for, if the key is a test key and one asks for an error. */
export function refuseAsAsked(principal: Principal, skus: readonly string[]): void {
  if (principal.mode !== 'test') return;
  for (const sku of skus) {
    if (!isSandboxErrorSku(sku)) continue;
    const refusal = REFUSAL_BY_CODE[SANDBOX_ERROR_ANSWERS[sku]];
    if (refusal !== null) throw refusal();
  }
}
