import type { Principal } from '../../domain/api-key.js';
import { DomainError, ServiceUnavailable } from '../../domain/errors.js';
import { isSandboxErrorSku } from '../../domain/sandbox.js';
import { TIMEOUTS } from '../timeouts.js';

/*
 * The errors a test key asks for by SKU (docs/api.md, test keys), answered as the real ones are and
 * costing nothing real: no storage read, no count beyond the request's own. `TEST-404` needs nothing
 * here: a sandbox never holds it, so it is not found as any unknown SKU is.
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

/** Throws the error the first of the SKUs asks for, if the key is a test key and one asks for an error. */
export function refuseAsAsked(principal: Principal, skus: readonly string[]): void {
  if (principal.mode !== 'test') return;
  for (const sku of skus) {
    if (!isSandboxErrorSku(sku)) continue;
    if (sku === 'TEST-429') throw new SandboxRateLimitAsked();
    if (sku === 'TEST-503') throw new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds);
  }
}
