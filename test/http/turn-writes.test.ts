import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { setImmediate as nextTurnEnd } from 'node:timers/promises';
import { expect } from 'chai';
import { createLogger } from '../../src/adapters/logging/logger.js';
import type { Operation } from '../../src/adapters/http/operation.js';
import { OPERATIONS, type ApiUseCases } from '../../src/adapters/http/operations.js';
import { createPipeline, type PipelineRequest } from '../../src/adapters/http/pipeline.js';
import { TurnWrites } from '../../src/adapters/http/turn-writes.js';
import { createContainer, TOKENS } from '../../src/composition/container.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { memoryInfrastructure } from '../support/test-server.js';

describe('a turn\'s writes, done together at its end', function () {
  it('writes nothing at once, then every entry of the turn in the order handed over', async function () {
    const written: number[] = [];
    const writes = new TurnWrites<number>((n) => written.push(n), () => undefined);
    writes.add(1);
    await Promise.resolve();
    writes.add(2);
    queueMicrotask(() => writes.add(3));
    expect(written).to.deep.equal([]);
    await nextTurnEnd();
    expect(written).to.deep.equal([1, 2, 3]);
    writes.add(4);
    expect(written).to.deep.equal([1, 2, 3]);
    await nextTurnEnd();
    expect(written).to.deep.equal([1, 2, 3, 4]);
  });

  it('hands a write that throws to its failure handler, and writes the others of its turn and of the next', async function () {
    const written: string[] = [];
    const failed: string[] = [];
    const writes = new TurnWrites<string>((entry) => {
      if (entry.startsWith('bad')) throw new Error(`cannot write ${entry}`);
      written.push(entry);
    }, (error, entry) => failed.push(`${entry}: ${(error as Error).message}`));
    for (const entry of ['a', 'bad-1', 'b', 'bad-2', 'c']) writes.add(entry);
    await nextTurnEnd();
    expect(written).to.deep.equal(['a', 'b', 'c']);
    expect(failed).to.deep.equal(['bad-1: cannot write bad-1', 'bad-2: cannot write bad-2']);
    writes.add('d');
    await nextTurnEnd();
    expect(written).to.deep.equal(['a', 'b', 'c', 'd']);
  });

  describe('in the request pipeline', function () {
    let server: Server;
    let base: string;
    /** For each request: whether its answer had been written when the pipeline's work on it was done. */
    const writtenWhenDone: boolean[] = [];
    const logLines: string[] = [];
    /** An operation of the test's own whose answer carries a header value node:http refuses to write. */
    const unwritable: Operation<ApiUseCases> = {
      operationId: 'unwritable', path: '/test/unwritable', tag: 'Service', summary: '', description: '', key: false, responses: {},
      answer: () => ({ status: 200, headers: ['X-Broken', 'a\r\nb'], body: Buffer.from('{}') }),
    };

    before(async function () {
      const logger = createLogger('info', new Writable({
        write(chunk: Buffer, _encoding, done) {
          logLines.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
          done();
        },
      }));
      const container = createContainer({ api: { ...await memoryInfrastructure(), logger: createLogger('silent') } });
      const operations = [...OPERATIONS, unwritable];
      const pipeline = createPipeline({ ...container.get(TOKENS.HttpDependencies), logger }, operations, 'http://127.0.0.1:3000');
      const bySku = { kind: 'operation', operation: OPERATIONS.find((operation) => operation.path.includes('/sku/'))! } as const;
      server = createServer((req, res) => {
        const url = req.url ?? '';
        const request: PipelineRequest = {
          method: 'GET', path: url, params: { sku: url.split('/').pop()! }, query: () => undefined,
          header: (name) => req.headers[name] as string | undefined, clientAddress: '127.0.0.1',
          publicBaseUrl: pipeline.publicBaseUrl, documentInfo: pipeline.documentInfo,
        };
        if (url === unwritable.path) void pipeline.respond({ kind: 'operation', operation: unwritable }, request, res);
        else void pipeline.respond(bySku, request, res).then(() => writtenWhenDone.push(res.headersSent));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(function () {
      server.close();
    });

    it('answers each request in full once its turn ends, not while the turn\'s work goes on', async function () {
      const answers = await Promise.all(['TENT-2P', 'abc-1', 'NOPE', 'TENT-2P'].map(async (sku) => {
        const response = await fetch(`${base}/api/v1/public/sku/${sku}`, { headers: { 'X-API-Key': KEYS.acme } });
        const body = await response.json() as { data?: { sku: string }; error?: string };
        return `${response.status} ${body.data?.sku ?? body.error}`;
      }));
      expect(answers).to.deep.equal(['200 TENT-2P', '200 abc-1', '404 sku_not_found', '200 TENT-2P']);
      expect(writtenWhenDone).to.deep.equal([false, false, false, false]);
    });

    it('ends the connection of an answer node:http refuses to write, logs it as unexpected, and answers the next request', async function () {
      const failed = await fetch(`${base}${unwritable.path}`, { headers: { 'X-Request-Id': 'unwritable-1' } }).then(() => 'answered', (error: unknown) => (error as Error).name);
      expect(failed).to.equal('TypeError');
      const unexpected = logLines.map((line) => JSON.parse(line) as { msg: string; reqId?: string; err?: { code?: string } }).find((line) => line.msg === 'unexpected error');
      expect(unexpected?.reqId).to.equal('unwritable-1');
      expect(unexpected?.err?.code).to.equal('ERR_INVALID_CHAR');
      const next = await fetch(`${base}/api/v1/public/sku/TENT-2P`, { headers: { 'X-API-Key': KEYS.acme } });
      expect(next.status).to.equal(200);
    });
  });
});
