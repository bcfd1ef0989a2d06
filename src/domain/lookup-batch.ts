import { Buffer } from 'node:buffer';
import { Type } from 'typebox';
import { DomainError } from './errors.js';
import type { LookupAnswer } from './lookup-answer.js';
import { etagOf } from './lookup-body.js';
import { LookupResultSchema } from './lookup-result.js';
import { ProductIdSchema } from './product-id.js';
import { SkuSchema } from './sku.js';

/** Most values one batch lookup takes, as sent (a value given twice counts twice). */
export const MAX_BATCH_VALUES = 100;

/** What a batch lookup answers, declared once: the OpenAPI document's schema, and through it the client's type. */
export const LookupBatchResponseSchema = Type.Object({
  data: Type.Array(LookupResultSchema, {
    maxItems: MAX_BATCH_VALUES,
    description: 'The products found, each exactly the `data` its single lookup answers, in the order their values first appear in the request.',
  }),
  not_found: Type.Array(Type.Union([SkuSchema, ProductIdSchema]), {
    maxItems: MAX_BATCH_VALUES,
    description: 'The values with no product in your catalog (another partner\'s product included), in request order: strings for SKUs, numbers for IDs.',
  }),
}, { additionalProperties: false });

/**
 * The values of a batch, each checked as its single lookup checks it (`parse`), each once, in the
 * order they first appear. Fewer than 1 or more than MAX_BATCH_VALUES is `invalid_batch`; the first
 * malformed value is refused with its lookup's code, the message naming its place.
 */
export function parseBatch<Value extends string | number>(values: readonly string[], parse: (value: string) => Value): Value[] {
  if (values.length === 0 || values.length > MAX_BATCH_VALUES) {
    throw new DomainError('invalid_batch', `A batch holds 1 to ${MAX_BATCH_VALUES} values; this one has ${values.length}.`);
  }
  const parsed = new Set<Value>();
  for (const [i, value] of values.entries()) {
    try {
      parsed.add(parse(value));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      throw new DomainError(error.code, `Value ${i + 1} of ${values.length}: ${error.message}`);
    }
  }
  return [...parsed];
}

const DATA_START = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

/**
 * A batch's answer: the answers found, in the order of their values, and the values not found. Its
 * body and ETag are made when first asked for, so a 304 writes no body.
 */
export class LookupBatch {
  private writtenBody: Buffer | undefined;
  private writtenEtag: string | undefined;

  private constructor(
    readonly found: readonly LookupAnswer[],
    readonly notFound: readonly (string | number)[],
  ) {}

  /** The batch of `values` (each once) from the catalog's answers to them, in the same order: null where it has none. */
  static of(values: readonly (string | number)[], answers: readonly (LookupAnswer | null)[]): LookupBatch {
    if (answers.length !== values.length) throw new Error(`the catalog gave ${answers.length} answers for ${values.length} values`);
    const found: LookupAnswer[] = [];
    const notFound: (string | number)[] = [];
    values.forEach((value, i) => {
      const answer = answers[i] ?? null;
      if (answer === null) notFound.push(value);
      else found.push(answer);
    });
    return new LookupBatch(found, notFound);
  }

  /** `{"data":[...],"not_found":[...]}`, each item the very bytes of its single lookup's `data`. */
  get body(): Buffer {
    if (this.writtenBody === undefined) {
      const parts: Buffer[] = [DATA_START];
      this.found.forEach((answer, i) => {
        if (i > 0) parts.push(COMMA);
        parts.push(answer.resultJson);
      });
      parts.push(Buffer.from(`],"not_found":${JSON.stringify(this.notFound)}}`, 'utf8'));
      this.writtenBody = Buffer.concat(parts);
    }
    return this.writtenBody;
  }

  /**
   * Strong: made from the items' ETags, in order, and the values not found, which together decide
   * the body; so it changes exactly when the body does, without hashing the body.
   */
  get etag(): string {
    this.writtenEtag ??= etagOf(JSON.stringify([this.found.map((answer) => answer.etag), this.notFound]));
    return this.writtenEtag;
  }
}
