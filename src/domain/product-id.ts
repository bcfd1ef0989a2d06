import { DomainError } from './errors.js';

const PRODUCT_ID_PATTERN = /^[1-9][0-9]*$/;

/** A service-assigned product ID: a positive integer no larger than 2^53-1. */
export type ProductId = number & { readonly __brand: 'ProductId' };

export function parseProductId(value: string): ProductId {
  // 16 digits bounds the work before Number() on hostile input.
  if (value.length <= 16 && PRODUCT_ID_PATTERN.test(value)) {
    const id = Number(value);
    if (Number.isSafeInteger(id)) return id as ProductId;
  }
  throw new DomainError(
    'invalid_product_id',
    `Product ID must be a positive integer without leading zeros, at most ${Number.MAX_SAFE_INTEGER}.`,
  );
}
