import { Type } from 'typebox';
import { DomainError } from './errors.js';

/** 16 digits bounds the work before Number() on hostile input, and holds 2^53-1. */
const MAX_ID_DIGITS = 16;

/** A product ID as a path parameter states it; the check below is this pattern, then the bound. */
const PRODUCT_ID_SOURCE = '^[1-9][0-9]*$';
export const ProductIdTextSchema = Type.String({ pattern: PRODUCT_ID_SOURCE, maxLength: MAX_ID_DIGITS });
const PRODUCT_ID_PATTERN = new RegExp(PRODUCT_ID_SOURCE);

/** A service-assigned product ID: a positive integer no larger than 2^53-1. */
export type ProductId = number & { readonly __brand: 'ProductId' };

export function parseProductId(value: string): ProductId {
  if (value.length <= MAX_ID_DIGITS && PRODUCT_ID_PATTERN.test(value)) {
    const id = Number(value);
    if (Number.isSafeInteger(id)) return id as ProductId;
  }
  throw new DomainError(
    'invalid_product_id',
    `Product ID must be a positive integer without leading zeros, at most ${Number.MAX_SAFE_INTEGER}.`,
  );
}
