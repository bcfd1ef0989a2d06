import { Type } from 'typebox';
import { DomainError } from './errors.js';

/** 16 digits bounds the work before Number() on hostile input, and holds 2^53-1. */
const MAX_ID_DIGITS = 16;

/** A product ID as the API states it: a whole number from 1 to 2^53-1, which `parseProductId` checks in the text of a path. */
export const ProductIdSchema = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
/** The text of such a number, without leading zeros. */
const PRODUCT_ID_PATTERN = /^[1-9][0-9]*$/;

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
