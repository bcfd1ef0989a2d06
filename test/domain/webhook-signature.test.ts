import { expect } from 'chai';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { PREVIOUS_SECRET_LIFETIME_MS, rotatedSecrets, signingSecrets, type WebhookSecrets } from '../../src/domain/webhook-endpoint.js';
import { catalogChangedMessage, webhookBody } from '../../src/domain/webhook-messages.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { newWebhookMessageId, signWebhook, type WebhookHeaders } from '../../src/domain/webhook-signature.js';

// Every signature here is checked by the official Standard Webhooks library, never by our own code.

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

function signed(body: string, secrets: readonly string[], timestampSeconds = nowSeconds()): WebhookHeaders {
  return signWebhook({ messageId: newWebhookMessageId(), timestampSeconds, body, secrets });
}

/** What the official verifier says: the parsed body, or its refusal. */
function verify(secret: string, body: string, headers: WebhookHeaders): unknown {
  try {
    return new Webhook(secret).verify(body, { ...headers });
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
}

const body = webhookBody(catalogChangedMessage({
  at: new Date('2026-11-24T10:00:00.456Z'),
  cursor: 'c2.1a.AAAAAAAAAAAAAAAA',
  changes: [{ sku: 'TENT-2P', productId: 1, change: 'upserted', etag: '"abc"', changedAt: new Date('2026-11-24T10:00:00.123Z') }],
}));

describe('webhook signatures (verified with the standardwebhooks package)', function () {
  it('makes secrets of whsec_ and the base64 of 32 random bytes, each new', function () {
    const secret = generateWebhookSecret();
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).to.have.length(32);
    expect(generateWebhookSecret()).to.not.equal(secret);
  });

  it('signs a message the official verifier accepts, returning the body it was given', function () {
    const secret = generateWebhookSecret();
    const headers = signed(body, [secret]);
    expect(verify(secret, body, headers)).to.deep.equal(JSON.parse(body));
    expect(headers['webhook-signature']).to.match(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(headers['content-type']).to.equal('application/json');
  });

  it('gives every message an id of msg_ and a unique string, and the attempt\'s time in whole seconds', function () {
    const headers = signed(body, [generateWebhookSecret()]);
    expect(headers['webhook-id']).to.match(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(newWebhookMessageId()).to.not.equal(newWebhookMessageId());
    expect(headers['webhook-timestamp']).to.match(/^[0-9]+$/);
    expect(Math.abs(Number(headers['webhook-timestamp']) - nowSeconds())).to.be.at.most(1);
  });

  it('is refused for a tampered body, another secret, another id or another timestamp', function () {
    const secret = generateWebhookSecret();
    const headers = signed(body, [secret]);
    expect(verify(secret, body.replace('TENT-2P', 'TENT-3P'), headers)).to.be.instanceOf(WebhookVerificationError);
    expect(verify(secret, `${body} `, headers)).to.be.instanceOf(WebhookVerificationError);
    expect(verify(generateWebhookSecret(), body, headers)).to.be.instanceOf(WebhookVerificationError);
    expect(verify(secret, body, { ...headers, 'webhook-id': newWebhookMessageId() })).to.be.instanceOf(WebhookVerificationError);
    expect(verify(secret, body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) })).to.be.instanceOf(WebhookVerificationError);
  });

  it('keys the HMAC with the secret\'s decoded bytes, not its text: a verifier given the same bytes raw accepts it', function () {
    const secret = generateWebhookSecret();
    const headers = signed(body, [secret]);
    const raw = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(new Webhook(raw, { format: 'raw' }).verify(body, { ...headers })).to.deep.equal(JSON.parse(body));
    const textAsKey = new Webhook(Buffer.from(secret), { format: 'raw' });
    expect(() => textAsKey.verify(body, { ...headers })).to.throw(WebhookVerificationError);
  });

  describe('during the 24 hours after a rotation', function () {
    const rotatedAt = new Date();
    const old = generateWebhookSecret();
    const fresh = generateWebhookSecret();
    const secrets: WebhookSecrets = rotatedSecrets({ current: old, previous: null }, fresh, rotatedAt);

    it('signs with both secrets, the new one first, and a receiver holding either verifies', function () {
      const using = signingSecrets(secrets, new Date(rotatedAt.getTime() + PREVIOUS_SECRET_LIFETIME_MS - 1));
      expect(using).to.deep.equal([fresh, old]);
      const headers = signed(body, using);
      const [first, second, more] = headers['webhook-signature'].split(' ');
      expect(more).to.equal(undefined);
      expect(verify(fresh, body, headers)).to.deep.equal(JSON.parse(body));
      expect(verify(old, body, headers)).to.deep.equal(JSON.parse(body));
      expect(verify(fresh, body, { ...headers, 'webhook-signature': first! })).to.deep.equal(JSON.parse(body));
      expect(verify(old, body, { ...headers, 'webhook-signature': second! })).to.deep.equal(JSON.parse(body));
      expect(verify(generateWebhookSecret(), body, headers)).to.be.instanceOf(WebhookVerificationError);
      expect(verify(old, body.replace('upserted', 'deleted'), headers)).to.be.instanceOf(WebhookVerificationError);
    });

    it('signs with the new secret alone once the 24 hours are over: the old one no longer verifies', function () {
      const using = signingSecrets(secrets, new Date(rotatedAt.getTime() + PREVIOUS_SECRET_LIFETIME_MS));
      expect(using).to.deep.equal([fresh]);
      const headers = signed(body, using);
      expect(verify(fresh, body, headers)).to.deep.equal(JSON.parse(body));
      expect(verify(old, body, headers)).to.be.instanceOf(WebhookVerificationError);
    });

    it('keeps only the secret just replaced beside the new one after a second rotation', function () {
      const third = generateWebhookSecret();
      const again = rotatedSecrets(secrets, third, new Date(rotatedAt.getTime() + 60_000));
      const headers = signed(body, signingSecrets(again, new Date(rotatedAt.getTime() + 120_000)));
      expect(verify(third, body, headers)).to.deep.equal(JSON.parse(body));
      expect(verify(fresh, body, headers)).to.deep.equal(JSON.parse(body));
      expect(verify(old, body, headers)).to.be.instanceOf(WebhookVerificationError);
    });
  });
});
