import { expect } from 'chai';
import { LookupAnswer } from '../../src/domain/lookup-answer.js';
import { etagOf, lookupBody } from '../../src/domain/lookup-body.js';
import type { LookupResult } from '../../src/domain/lookup-result.js';

const result: LookupResult = {
  sku: 'TENT-2P',
  status: 'active',
  product: {
    id: 7, title: 'Tent «2P»', description: null, short_description: 's', image: 'https://img.example/t.jpg',
    what_text: 'w', who_text: 'w', why_text: 'w', videos: [{ id: 3, name: null, aspect_ratio: '16x9', length: 12.5 }], pdp_urls: [],
  },
};

describe('LookupAnswer', function () {
  it('writes a result held in memory once, as the lookup body with its ETag', function () {
    const answer = LookupAnswer.ofResult(result);
    expect(answer.body.toString('utf8')).to.equal(lookupBody(result));
    expect(answer.etag).to.equal(etagOf(lookupBody(result)));
    // Written once: the same bytes every time.
    const body = answer.body;
    expect(answer.body).to.equal(body);
    expect(Object.isFrozen(answer.result.product.videos[0])).to.equal(true);
  });

  it('sends stored text as it is, with the stored ETag, and parses it only when the result is asked for', function () {
    // Stored with spaces, as a text another writer made: sent byte for byte, not written again.
    const text = '{"sku": "TENT-2P", "status": "active", "product": {"id": 7, "title": "Tent \u00ab2P\u00bb"}}';
    const stored = Buffer.from(`xx${text}yy`).subarray(2, 2 + Buffer.byteLength(text));
    const answer = LookupAnswer.ofStoredText(stored, '"stored-etag"');
    expect(answer.body.toString('utf8')).to.equal(`{"data":${text}}`);
    expect(answer.etag).to.equal('"stored-etag"');
    // A copy: the buffer the text came in can change or go without changing the answer.
    stored.fill(0);
    expect(answer.body.toString('utf8')).to.equal(`{"data":${text}}`);
    expect(answer.result.product.title).to.equal('Tent «2P»');
    expect(Object.isFrozen(answer.result.product)).to.equal(true);
  });

  it('makes the ETag of a stored text that has none, as a lookup of the same result sends it', function () {
    const answer = LookupAnswer.ofResultText(JSON.stringify(result));
    expect([answer.body.toString('utf8'), answer.etag]).to.deep.equal([lookupBody(result), LookupAnswer.ofResult(result).etag]);
  });
});
