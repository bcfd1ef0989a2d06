import { expect } from 'chai';
import type { WebhookEndpointStore } from '../../src/application/webhooks/webhook-endpoint-store.js';
import type { WebhookEndpoint } from '../../src/domain/webhook-endpoint.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';

/** Called per test: the fixture catalog (partners acme and globex) and no endpoint. */
export type WebhookEndpointStoreFactory = () => Promise<WebhookEndpointStore>;

const T0 = new Date(Date.UTC(2026, 0, 5, 9, 0, 0, 123));
const later = (ms: number): Date => new Date(T0.getTime() + ms);

function endpoint(id: string, partnerId: string, createdAt = T0, fields: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id, partnerId, url: `https://hooks.example.com/${id}`, description: null, status: 'enabled', createdAt,
    secrets: { current: generateWebhookSecret(), previous: null }, ...fields,
  };
}

/** Every WebhookEndpointStore adapter must pass these. */
export function webhookEndpointStoreContract(adapterName: string, factory: WebhookEndpointStoreFactory): void {
  describe(`WebhookEndpointStore contract: ${adapterName}`, function () {
    let store: WebhookEndpointStore;

    beforeEach(async function () {
      store = await factory();
    });

    it('knows the catalog\'s partners only', async function () {
      expect(await store.partnerExists('acme')).to.equal(true);
      expect(await store.partnerExists('nobody')).to.equal(false);
    });

    it('stores an endpoint whole, finds it by id and lists a partner\'s oldest first, no other partner\'s', async function () {
      const first = endpoint('whep_0000000000000001', 'acme', later(1_000), {
        description: 'Shop sync', url: `https://hooks.example.com/${'p'.repeat(2_000)}`,
      });
      const second = endpoint('whep_0000000000000002', 'acme', later(2_000), { status: 'disabled' });
      expect(await store.insertWithin(second, 10)).to.equal('added');
      expect(await store.insertWithin(first, 10)).to.equal('added');
      expect(await store.insertWithin(endpoint('whep_0000000000000003', 'globex', later(500)), 10)).to.equal('added');
      expect(await store.find(first.id)).to.deep.equal(first);
      expect(await store.find(second.id)).to.deep.equal(second);
      expect(await store.find('whep_ffffffffffffffff')).to.equal(null);
      expect(await store.list('acme')).to.deep.equal([first, second]);
      expect((await store.list('globex')).map((e) => e.id)).to.deep.equal(['whep_0000000000000003']);
      expect(await store.list('nobody')).to.deep.equal([]);
    });

    it('refuses an endpoint for an unknown partner, and one past the limit, storing nothing', async function () {
      expect(await store.insertWithin(endpoint('whep_0000000000000001', 'nobody'), 10)).to.equal('partner_not_found');
      expect(await store.find('whep_0000000000000001')).to.equal(null);
      for (let i = 1; i <= 3; i += 1) expect(await store.insertWithin(endpoint(`whep_000000000000000${i}`, 'acme', later(i)), 3)).to.equal('added');
      expect(await store.insertWithin(endpoint('whep_0000000000000009', 'acme', later(9)), 3)).to.equal('limit_reached');
      expect(await store.find('whep_0000000000000009')).to.equal(null);
      // The limit is per partner.
      expect(await store.insertWithin(endpoint('whep_000000000000000a', 'globex'), 3)).to.equal('added');
    });

    it('never lets adds made at once pass the limit', async function () {
      const attempts = Array.from({ length: 8 }, (_, i) => store.insertWithin(endpoint(`whep_00000000000000${String(i).padStart(2, '0')}`, 'acme', later(i)), 5));
      const results = await Promise.all(attempts);
      expect(results.filter((r) => r === 'added')).to.have.length(5);
      expect(results.filter((r) => r === 'limit_reached')).to.have.length(3);
      expect(await store.list('acme')).to.have.length(5);
    });

    it('sets the status, and says false for no such endpoint', async function () {
      const e = endpoint('whep_0000000000000001', 'acme');
      await store.insertWithin(e, 10);
      expect(await store.setStatus(e.id, 'disabled')).to.equal(true);
      expect((await store.find(e.id))?.status).to.equal('disabled');
      expect(await store.setStatus(e.id, 'disabled')).to.equal(true);
      expect(await store.setStatus(e.id, 'enabled')).to.equal(true);
      expect((await store.find(e.id))?.status).to.equal('enabled');
      expect(await store.setStatus('whep_ffffffffffffffff', 'enabled')).to.equal(false);
    });

    it('replaces the secrets only over the current one it was given', async function () {
      const e = endpoint('whep_0000000000000001', 'acme');
      await store.insertWithin(e, 10);
      const rotated = { current: generateWebhookSecret(), previous: { secret: e.secrets.current, until: later(86_400_000) } };
      expect(await store.replaceSecrets(e.id, e.secrets.current, rotated)).to.equal(true);
      expect((await store.find(e.id))?.secrets).to.deep.equal(rotated);
      const stale = { current: generateWebhookSecret(), previous: { secret: e.secrets.current, until: later(90_000_000) } };
      expect(await store.replaceSecrets(e.id, e.secrets.current, stale)).to.equal(false);
      expect((await store.find(e.id))?.secrets).to.deep.equal(rotated);
      expect(await store.replaceSecrets('whep_ffffffffffffffff', rotated.current, stale)).to.equal(false);
    });

    it('removes an endpoint, once', async function () {
      const e = endpoint('whep_0000000000000001', 'acme');
      await store.insertWithin(e, 10);
      expect(await store.remove(e.id)).to.equal(true);
      expect(await store.find(e.id)).to.equal(null);
      expect(await store.list('acme')).to.deep.equal([]);
      expect(await store.remove(e.id)).to.equal(false);
    });
  });
}
