import { expect } from 'chai';
import { DomainError } from '../../src/domain/errors.js';
import { LookupAnswer } from '../../src/domain/lookup-answer.js';
import { LookupBatch, MAX_BATCH_VALUES, parseBatch } from '../../src/domain/lookup-batch.js';
import { etagOf } from '../../src/domain/lookup-body.js';
import { parseProductId } from '../../src/domain/product-id.js';
import { parseSku } from '../../src/domain/sku.js';

/** The refusal `fn` throws, as `code: message`. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}

const stored = (sku: string, etag: string): LookupAnswer => LookupAnswer.ofStoredText(Buffer.from(`{"sku":"${sku}"}`), etag);

describe('a batch of lookups', function () {
  it('keeps each value once, in the order it first appears, checked as its single lookup checks it', function () {
    expect(parseBatch(['B', 'A', 'B', 'C', 'A'], parseSku)).to.deep.equal(['B', 'A', 'C']);
    expect(parseBatch(['7', '1', '7'], parseProductId)).to.deep.equal([7, 1]);
    expect(parseBatch(Array<string>(MAX_BATCH_VALUES).fill('A'), parseSku)).to.deep.equal(['A']);
  });

  it('refuses no values or more than 100 whole, and names the first malformed value\'s place', function () {
    expect(refusal(() => parseBatch([], parseSku))).to.equal('invalid_batch: A batch holds 1 to 100 values; this one has 0.');
    expect(refusal(() => parseBatch(Array<string>(101).fill(''), parseSku))).to.equal('invalid_batch: A batch holds 1 to 100 values; this one has 101.');
    expect(refusal(() => parseBatch(['A', 'a*b', ''], parseSku))).to.equal('invalid_sku: Value 2 of 3: SKU may contain only letters, digits, hyphen, underscore and period.');
    expect(refusal(() => parseBatch(['1', '01'], parseProductId))).to.match(/^invalid_product_id: Value 2 of 2: Product ID must be/);
  });

  it('writes the items\' own bytes and the values not found, with an ETag of both that follows order and content', function () {
    const [a, b] = [stored('A', '"a"'), stored('B', '"b"')];
    const batch = LookupBatch.of(['A', 'X', 'B'], [a, null, b]);
    expect(batch.body.toString('utf8')).to.equal('{"data":[{"sku":"A"},{"sku":"B"}],"not_found":["X"]}');
    expect(batch.etag).to.equal(etagOf(JSON.stringify([['"a"', '"b"'], ['X']])));
    const etags = [
      LookupBatch.of(['B', 'X', 'A'], [b, null, a]), LookupBatch.of(['A', 'B'], [a, b]), LookupBatch.of(['A', 'Y', 'B'], [a, null, b]),
      LookupBatch.of(['A', 'X', 'B'], [a, null, stored('B', '"b2"')]), LookupBatch.of([1, 2], [null, null]), LookupBatch.of(['1', '2'], [null, null]),
    ].map((other) => other.etag);
    expect(new Set([batch.etag, ...etags]).size).to.equal(7);
    expect(LookupBatch.of(['A'], [null]).body.toString('utf8')).to.equal('{"data":[],"not_found":["A"]}');
    expect(() => LookupBatch.of(['A', 'B'], [a])).to.throw(/1 answers for 2 values/);
  });
});
