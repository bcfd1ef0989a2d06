import { expect } from 'chai';
import { textLength } from '../../src/domain/answer-size.js';
import { productOf } from '../../src/domain/catalog-entries.js';
import { ProductSchema, type ProductEntry } from '../../src/domain/catalog-format.js';
import { pathText, replaced, SampleMaker, stringLeaves } from '../support/format-leaves.js';

const LONGER = 'x'.repeat(1_000);

describe('answer size', function () {
  // The bound is checked against a count of the product's text: a text left out of it would let a
  // product over the bound through unweighed.
  it('counts every character of every text of a product in the catalog format, and of its publisher\'s name', function () {
    const entry = new SampleMaker().sample(ProductSchema, false) as ProductEntry;
    const base = textLength(productOf(entry), 'Acme');
    const leaves = stringLeaves(ProductSchema, entry);
    const missed = leaves
      .filter((leaf) => textLength(productOf(replaced(entry, leaf.path, (text) => `${String(text)}${LONGER}`) as ProductEntry), 'Acme') !== base + LONGER.length)
      .map((leaf) => pathText(leaf.path));
    expect(missed, 'texts 1,000 characters longer that did not count 1,000 more').to.deep.equal([]);
    expect(leaves.length, 'the walk reached the texts').to.be.above(25);
    expect(textLength(productOf(entry), `Acme${LONGER}`)).to.equal(base + LONGER.length);
  });
});
