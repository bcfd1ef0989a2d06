import { expect } from 'chai';
import { traceIdOf } from '../../src/adapters/tracing/trace-context.js';

describe('traceparent (W3C Trace Context)', function () {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parent = '00f067aa0ba902b7';

  it('gives the trace id of a valid header, of version 00 or a later one with more fields', function () {
    expect(traceIdOf(`00-${id}-${parent}-01`)).to.equal(id);
    expect(traceIdOf(`00-${id}-${parent}-00`)).to.equal(id);
    expect(traceIdOf(` 00-${id}-${parent}-01 `)).to.equal(id);
    expect(traceIdOf(`01-${id}-${parent}-01-what-comes-next`)).to.equal(id);
  });

  it('ignores what the rules refuse', function () {
    for (const value of [
      undefined, '', 'garbage', `ff-${id}-${parent}-01`, `00-${id}-${parent}-01-extra`, `00-${'0'.repeat(32)}-${parent}-01`,
      `00-${id}-${'0'.repeat(16)}-01`, `00-${id.toUpperCase()}-${parent}-01`, `00-${id.slice(1)}-${parent}-01`, `00-${id}-${parent}-1`,
      `00_${id}_${parent}_01`, `01-${id}-${parent}-01x`,
    ]) {
      expect(traceIdOf(value), String(value)).to.equal(undefined);
    }
  });
});
