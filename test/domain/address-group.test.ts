import { expect } from 'chai';
import { addressGroup, UNKNOWN_ADDRESS_GROUP } from '../../src/domain/address-group.js';

describe('the group a client address is counted in', function () {
  it('is an IPv4 address itself, in whichever form IPv6 maps it', function () {
    expect(addressGroup('192.0.2.1')).to.equal('192.0.2.1');
    expect(addressGroup('::ffff:192.0.2.1')).to.equal('192.0.2.1');
    expect(addressGroup('::FFFF:c000:0201')).to.equal('192.0.2.1');
    expect(addressGroup('0:0:0:0:0:ffff:192.0.2.1')).to.equal('192.0.2.1');
    expect(addressGroup('192.0.2.2')).to.not.equal(addressGroup('192.0.2.1'));
  });

  it('is the /64 of an IPv6 address, however it is written', function () {
    const group = '2001:db8:1:2::/64';
    for (const address of ['2001:db8:1:2::1', '2001:DB8:1:2::ffff', '2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::1%eth0', '2001:db8:1:2:0:0:c000:201']) {
      expect(addressGroup(address), address).to.equal(group);
    }
    expect(addressGroup('2001:db8:1:3::1')).to.equal('2001:db8:1:3::/64');
    expect(addressGroup('::1')).to.equal('0:0:0:0::/64');
    expect(addressGroup('fe80::1')).to.equal('fe80:0:0:0::/64');
    expect(addressGroup('64:ff9b::192.0.2.1')).to.equal('64:ff9b:0:0::/64');
  });

  it('puts whatever is no IP address in one shared group', function () {
    for (const address of ['', 'localhost', '192.0.2.256', '::ffff:', '2001:db8::1::2']) {
      expect(addressGroup(address), address).to.equal(UNKNOWN_ADDRESS_GROUP);
    }
  });
});
