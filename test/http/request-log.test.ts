import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { createLogger } from '../../src/adapters/logging/logger.js';
import { requestLogOf, type RequestLine } from '../../src/adapters/http/request-log.js';
import { principalOf } from '../../src/domain/api-key.js';

/** Bytes as the destination received them, one entry per write. */
function sink(): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, writes };
}

/** What `logger.info(fields, 'request')` writes for the line: the request log's line before it wrote its own. */
function pinoLine(logger: Logger, line: RequestLine): void {
  const fields: Record<string, unknown> = {
    reqId: line.requestId, method: line.method, path: line.path.replace(/(pcat_(?:live|test)_)[A-Za-z0-9]*/g, '$1[redacted]'),
    status: line.status, ms: Math.round(line.ms * 100) / 100,
  };
  if (line.traceId !== undefined) fields.trace_id = line.traceId;
  if (line.principal !== undefined) Object.assign(fields, { partner: line.principal.partnerId, mode: line.principal.mode, keyId: line.principal.keyId });
  logger.info(fields, 'request');
}

const base: RequestLine = {
  requestId: '0b6f0d5e-6c8f-4f6e-9a59-1f1a3c9f7e21', traceId: undefined, method: 'GET', path: '/api/v1/public/sku/TENT-2P',
  status: 200, ms: 0.123456, principal: principalOf('key_7', 'acme', 'live'),
};

const LINES: RequestLine[] = [
  base,
  { ...base, principal: undefined, status: 401 },
  { ...base, principal: principalOf('key_8', 'acme', 'test') },
  { ...base, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', ms: 12.005 },
  { ...base, method: undefined },
  { ...base, method: 'PROPFIND', status: 405 },
  { ...base, path: '/api/v1/public/sku/pcat_live_AbC123/x"y\\z' },
  { ...base, path: '/api/v1/public/sku/pcat_test_AbC123/pcat_live_' },
  { ...base, path: '/control\u0001\u001f/é/\u00ff' },
  { ...base, path: `/${'long-segment/'.repeat(20)}"quoted"` },
  { ...base, requestId: 'client:req.1_2-3', principal: principalOf('key\\1', 'part"ner', 'live') },
  { ...base, principal: principalOf(`${'k'.repeat(100)}\ud800`, 'a"\ud800b', 'live') },
];

/** The same line from both writers, with the one field that differs between two calls (the time) set aside. */
function sameTime(text: string): string {
  return text.replace(/"time":\d+/, '"time":0');
}

describe('the request log line', function () {
  it('is byte for byte the line pino writes for the same fields, on createLogger\'s logger', function () {
    for (const line of LINES) {
      const ours = sink();
      const theirs = sink();
      requestLogOf(createLogger('info', ours.stream))(line);
      pinoLine(createLogger('info', theirs.stream), line);
      expect(ours.writes.map(sameTime)).to.deep.equal(theirs.writes.map(sameTime));
      expect(ours.writes).to.have.length(1);
    }
  });

  it('is written without pino\'s field walk on createLogger\'s logger, its trace-ids mixin on or off, and not at all below info', function () {
    for (const traceIds of [false, true]) {
      const { stream, writes } = sink();
      const logger = createLogger('info', stream, { traceIds });
      logger.info = () => {
        throw new Error('the line went through pino');
      };
      requestLogOf(logger)({ ...base, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' });
      expect(writes, `traceIds ${traceIds}`).to.have.length(1);
      expect(JSON.parse(writes[0]!)).to.include({
        level: 30, service: 'partner-catalog-api', reqId: base.requestId, partner: 'acme', mode: 'live', keyId: 'key_7', msg: 'request',
        trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7',
      });
    }

    const quiet = sink();
    const warnOnly = createLogger('warn', quiet.stream);
    const log = requestLogOf(warnOnly);
    log(base);
    warnOnly.level = 'info';
    log(base);
    expect(quiet.writes).to.have.length(1);
  });

  it('carries a child logger\'s bindings, and is pino\'s own where pino would change the line', function () {
    const cases: [string, (stream: Writable) => Logger][] = [
      ['a child', (stream) => createLogger('info', stream).child({ instance: 'i-1' })],
      ['a mixin', (stream) => pino({ mixin: () => ({ extra: 1 }) }, stream)],
      ['a log formatter', (stream) => pino({ formatters: { log: (fields) => ({ ...fields, shaped: true }) } }, stream)],
      ['a redacted field', (stream) => pino({ redact: ['path'] }, stream)],
      ['a message prefix', (stream) => pino({ msgPrefix: '[api] ' }, stream)],
      ['a nested key', (stream) => pino({ nestedKey: 'fields' }, stream)],
    ];
    for (const [name, make] of cases) {
      const ours = sink();
      const theirs = sink();
      requestLogOf(make(ours.stream))(base);
      pinoLine(make(theirs.stream), base);
      expect(ours.writes.map(sameTime), name).to.deep.equal(theirs.writes.map(sameTime));
    }
  });
});
