import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { clientAddressResolver, trustedProxies } from '../../src/adapters/listening/client-address.js';

/** Just the two parts of a request the resolver reads. */
const request = (peer: string, forwardedFor?: string | string[]): IncomingMessage =>
  ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('the client address of a request', function () {
  const behindProxies = clientAddressResolver(trustedProxies(['10.0.0.0/8', '192.0.2.10', 'fd00::/8']));

  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says', function () {
    const direct = clientAddressResolver(trustedProxies([]));
    expect(direct(request('198.51.100.1', '203.0.113.5'))).to.equal('198.51.100.1');
    expect(direct(request('::ffff:198.51.100.1'))).to.equal('198.51.100.1');
  });

  it('ignores X-Forwarded-For from a peer that is not trusted', function () {
    expect(behindProxies(request('198.51.100.1', '203.0.113.5'))).to.equal('198.51.100.1');
  });

  it('is the rightmost hop that is not a trusted proxy', function () {
    expect(behindProxies(request('10.1.2.3', '203.0.113.5'))).to.equal('203.0.113.5');
    expect(behindProxies(request('::ffff:10.1.2.3', '203.0.113.9, 203.0.113.5, 192.0.2.10'))).to.equal('203.0.113.5');
    expect(behindProxies(request('fd00::1', ['203.0.113.9', '2001:db8::7']))).to.equal('2001:db8::7');
  });

  it('stops at a hop that is not an address, taking the last trusted proxy before it', function () {
    expect(behindProxies(request('10.1.2.3', 'unknown, 192.0.2.10'))).to.equal('192.0.2.10');
    expect(behindProxies(request('10.1.2.3', 'garbage'))).to.equal('10.1.2.3');
  });

  it('is the leftmost hop when every hop is a trusted proxy, and the proxy when there is no header', function () {
    expect(behindProxies(request('10.1.2.3', '10.9.9.9, 192.0.2.10'))).to.equal('10.9.9.9');
    expect(behindProxies(request('10.1.2.3'))).to.equal('10.1.2.3');
  });

  it('refuses a trusted proxy entry that is neither an address nor a CIDR block', function () {
    expect(() => trustedProxies(['10.0.0.0/40'])).to.throw('not an IP address or CIDR block: "10.0.0.0/40"');
    expect(() => trustedProxies(['proxy.local'])).to.throw('not an IP address or CIDR block');
  });
});
