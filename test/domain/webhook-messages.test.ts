import { expect } from 'chai';
import type { ProductChange } from '../../src/domain/changes.js';
import { catalogChangedMessage, MAX_LISTED_CHANGES, webhookBody, webhookTestMessage } from '../../src/domain/webhook-messages.js';

const AT = new Date('2026-11-24T10:00:00.789Z');
const CHANGED_AT = new Date('2026-11-24T09:59:58.123Z');

function changes(upserted: number, deleted: number): ProductChange[] {
  const made: ProductChange[] = [];
  for (let i = 1; i <= upserted; i += 1) made.push({ sku: `SKU-${i}`, productId: i, change: 'upserted', etag: `"e${i}"`, changedAt: CHANGED_AT });
  for (let i = 1; i <= deleted; i += 1) made.push({ sku: `GONE-${i}`, productId: 1000 + i, change: 'deleted', etag: null, changedAt: CHANGED_AT });
  return made;
}

describe('webhook messages', function () {
  it('catalog.changed counts the import\'s changes and lists them in the feed\'s own shape, with the cursor from before it', function () {
    const message = catalogChangedMessage({ at: AT, cursor: 'c2.5.QUJDREVGR0hJSktMTU5P', changes: changes(2, 1) });
    expect(JSON.parse(webhookBody(message))).to.deep.equal({
      type: 'catalog.changed',
      timestamp: '2026-11-24T10:00:00Z',
      data: {
        changes: 3, upserted: 2, deleted: 1, cursor: 'c2.5.QUJDREVGR0hJSktMTU5P',
        items: [
          { sku: 'SKU-1', product_id: 1, change: 'upserted', etag: '"e1"', changed_at: '2026-11-24T09:59:58.123Z' },
          { sku: 'SKU-2', product_id: 2, change: 'upserted', etag: '"e2"', changed_at: '2026-11-24T09:59:58.123Z' },
          { sku: 'GONE-1', product_id: 1001, change: 'deleted', etag: null, changed_at: '2026-11-24T09:59:58.123Z' },
        ],
      },
    });
  });

  it('lists items up to 100 changes and leaves them out from 101 on, counts kept', function () {
    const hundred = catalogChangedMessage({ at: AT, cursor: 'c', changes: changes(60, 40) });
    expect(hundred.data.items).to.have.length(MAX_LISTED_CHANGES);
    const more = catalogChangedMessage({ at: AT, cursor: 'c', changes: changes(60, 41) });
    expect(more.data).to.deep.equal({ changes: 101, upserted: 60, deleted: 41, cursor: 'c' });
    expect(webhookBody(more)).to.not.include('items');
  });

  it('webhook.test carries the endpoint id as its data', function () {
    expect(JSON.parse(webhookBody(webhookTestMessage({ at: AT, endpointId: 'whep_0123456789abcdef' })))).to.deep.equal({
      type: 'webhook.test', timestamp: '2026-11-24T10:00:00Z', data: { endpoint_id: 'whep_0123456789abcdef' },
    });
  });
});
