import { Type } from 'typebox';
import { DomainError } from './errors.js';

export const SKU_MAX_LENGTH = 50;

/** A SKU as a path parameter states it; the check below is this pattern. */
const SKU_SOURCE = '^[A-Za-z0-9._-]+$';
export const SkuSchema = Type.String({ minLength: 1, maxLength: SKU_MAX_LENGTH, pattern: SKU_SOURCE });
const SKU_PATTERN = new RegExp(SKU_SOURCE);

/** A partner's own product identifier: 1 to 50 of letters, digits, `.`, `_`, `-`; matched exactly. */
export type Sku = string & { readonly __brand: 'Sku' };

export function isValidSku(value: string): value is Sku {
  return value.length <= SKU_MAX_LENGTH && SKU_PATTERN.test(value);
}

export function parseSku(value: string): Sku {
  if (isValidSku(value)) return value;
  throw new DomainError('invalid_sku', describeInvalidSku(value));
}

function describeInvalidSku(value: string): string {
  if (value.length === 0) return 'SKU must not be empty.';
  if (value.length > SKU_MAX_LENGTH) {
    return `SKU must be at most ${SKU_MAX_LENGTH} characters long; got ${value.length}.`;
  }
  return 'SKU may contain only letters, digits, hyphen, underscore and period.';
}
