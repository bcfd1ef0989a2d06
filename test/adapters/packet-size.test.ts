import { expect } from 'chai';
import { packetProblem, REQUIRED_PACKET_BYTES } from '../../src/adapters/mysql/packet-size.js';
import { MAX_ANSWER_BYTES } from '../../src/domain/answer-size.js';

describe('the database packet an import needs', function () {
  it('holds a product\'s answer at its bound, escaped, and fits MariaDB\'s default of 16 MB', function () {
    expect(REQUIRED_PACKET_BYTES).to.be.greaterThan(2 * MAX_ANSWER_BYTES);
    expect(packetProblem(16 * 1_048_576)).to.equal(null);
  });

  it('refuses a server whose packet is smaller, in one line saying what to raise', function () {
    expect(packetProblem(4 * 1_048_576)).to.equal(
      `the database server's max_allowed_packet is 4194304 bytes; an import needs at least ${REQUIRED_PACKET_BYTES} ` +
      `(a product's answer may be ${MAX_ANSWER_BYTES} bytes, twice that escaped in a statement): ` +
      'raise max_allowed_packet (16M, MariaDB\'s default, is enough) and import again; nothing was written',
    );
  });
});
