import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFailureLog } from '../../src/adapters/http/failure-log.js';
import { LineBatches, LOG_BATCH_BYTES, type BatchDestination } from '../../src/adapters/logging/logger.js';
import { DatabaseError } from '../../src/adapters/mysql/database-error.js';
import { capturedLogger } from '../support/captured-logger.js';

const HASH = '4f38'.repeat(16);

/** An error shaped like mysql2's, with the statement and the server's message quoting a value. */
function driverError(): Error {
  const error = new Error(`Duplicate entry '${HASH}' for key 'sha256'`) as Error & Record<string, unknown>;
  Object.assign(error, {
    code: 'ER_DUP_ENTRY',
    errno: 1062,
    sqlState: '23000',
    sqlMessage: `Duplicate entry '${HASH}' for key 'sha256'`,
    sql: `select id from api_keys where sha256 = '${HASH}'`,
    parameters: [HASH],
  });
  return error;
}

describe('the logger', function () {
  it('writes no statement, value or server message of a driver error, itself or as a cause', function () {
    const { logger, lines } = capturedLogger();
    logger.error({ err: driverError() }, 'direct');
    logger.error({ err: new Error('lookup failed', { cause: driverError() }) }, 'as a cause');
    logger.error({ err: Object.assign(new Error('wrapped'), { original: driverError(), values: [HASH] }) }, 'nested');
    expect(lines).to.have.length(3);
    for (const line of lines) expect(JSON.stringify(line)).to.not.include(HASH).and.not.match(/select|sqlMessage/i);
    const err = lines[0]!.err as Record<string, unknown>;
    expect(err.code).to.equal('ER_DUP_ENTRY');
    expect(err.message).to.equal('database driver error (ER_DUP_ENTRY); its message is withheld');
    expect(err.stack).to.match(/^\s+at /);
  });

  it('keeps an ordinary error whole', function () {
    const { logger, lines } = capturedLogger();
    logger.error({ err: new Error('product 7 has no stored lookup answer') }, 'plain');
    const err = lines[0]!.err as Record<string, unknown>;
    expect(err.message).to.equal('product 7 has no stored lookup answer');
    expect(err.stack).to.match(/^Error: product 7 has no stored lookup answer\n\s+at /);
  });
});

/** A child process logging through createLogger's own stdout, its lines as they arrive. */
function loggingChild(body: string): { lines: string[]; exited: Promise<number | null>; child: ChildProcess } {
  const script = `import { createLogger } from ${JSON.stringify(new URL('../../src/adapters/logging/logger.ts', import.meta.url).href)};\nconst logger = createLogger('info');\n${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let rest = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop()!;
    lines.push(...parts);
  });
  return { lines, child, exited: new Promise((resolve) => child.on('close', resolve)) };
}

describe('the log batches', function () {
  /** Batches as the destination receives them; `flushSync` hands over what is gathered first. */
  function batches(): { lines: LineBatches; received: Buffer[]; destination: BatchDestination; flushed: () => number } {
    const received: Buffer[] = [];
    let flushes = 0;
    const destination: BatchDestination = { write: (batch) => received.push(Buffer.from(batch)), flushSync: () => void (flushes += 1) };
    return { lines: new LineBatches(destination), received, destination, flushed: () => flushes };
  }

  it('hands over nothing until a batch is full, then every byte in order, a line too long for a batch on its own', function () {
    const { lines, received } = batches();
    const written: string[] = [];
    const write = (line: string): void => {
      written.push(line);
      lines.write(line);
    };
    write(`${'é'.repeat(100)}\n`);
    expect(received).to.have.length(0);
    for (let i = 0; received.length === 0; i += 1) write(`{"i":${i},"text":"${'€'.repeat(i % 70)}"}\n`);
    expect(received[0]!.length).to.be.at.least(LOG_BATCH_BYTES);
    write(`${'ü'.repeat(LOG_BATCH_BYTES)}\n`); // twice the batch's bytes: the gathered lines go first, then it alone
    expect(received.at(-1)!.toString('utf8')).to.equal(written.at(-1));
    write('after\n');
    lines.handOver();
    expect(Buffer.concat(received).toString('utf8')).to.equal(written.join(''));
  });

  it('writes the gathered lines first when the destination is flushed at exit', function () {
    const { lines, received, destination, flushed } = batches();
    lines.write('one\n');
    lines.write('two\n');
    destination.flushSync(); // as pino's destination is flushed at exit
    expect(Buffer.concat(received).toString('utf8')).to.equal('one\ntwo\n');
    expect(flushed()).to.equal(1);
  });
});

describe('the logger on stdout', function () {
  this.timeout(20_000);

  it('writes every line, whole and in order, when the process exits with lines still gathered', async function () {
    const { lines, exited } = loggingChild(`for (let i = 0; i < 5000; i += 1) logger.info({ i, text: 'é'.repeat(i % 50) }, 'line');\nprocess.exit(3);`);
    expect(await exited).to.equal(3);
    expect(lines.map((line) => (JSON.parse(line) as { i: number }).i)).to.deep.equal(Array.from({ length: 5000 }, (_, i) => i));
  });

  it('writes a lone line while the process runs, without waiting for a batch to fill', async function () {
    const { lines, child, exited } = loggingChild(`logger.info('alone');\nsetTimeout(() => process.exit(0), 10_000);`);
    const started = Date.now();
    while (lines.length === 0 && Date.now() - started < 5_000) await sleep(20);
    child.kill('SIGKILL');
    await exited;
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).to.deep.equal(['alone']);
  });
});

describe('the unexpected-error log', function () {
  it('logs the first failure of a kind in full, then one summary with a count per window, and forgets a quiet kind', async function () {
    const { logger, lines } = capturedLogger();
    const failures = createFailureLog(logger, 200);
    const timeout = new DatabaseError('no answer in time');
    for (let i = 0; i < 50; i += 1) failures.unexpected(timeout, `req-${i}`);
    failures.unexpected(new DatabaseError('queue full'), 'req-other');
    expect(lines.map((l) => [l.msg, l.reqId])).to.deep.equal([['unexpected error', 'req-0'], ['unexpected error', 'req-other']]);
    expect((lines[0]!.err as Record<string, unknown>).stack).to.be.a('string');

    const deadline = Date.now() + 5_000;
    while (lines.length < 3 && Date.now() < deadline) await sleep(20);
    expect(lines.slice(2)).to.have.length(1);
    expect(lines[2]).to.include({ msg: 'unexpected error repeated', kind: 'DatabaseError: database: no answer in time', count: 49, windowMs: 200 });
    expect(lines[2]).to.not.have.property('err');

    // After a window without repeats the kind is forgotten: its next failure is logged in full again.
    await sleep(500);
    expect(lines).to.have.length(3);
    failures.unexpected(timeout, 'req-later');
    expect(lines[3]).to.include({ msg: 'unexpected error', reqId: 'req-later' });
  });

  it('never names a kind after a raw driver error message', function () {
    const { logger, lines } = capturedLogger();
    createFailureLog(logger, 200).unexpected(driverError(), 'req-1');
    expect(lines[0]!.kind).to.equal('Error ER_DUP_ENTRY');
    expect(JSON.stringify(lines)).to.not.include(HASH);
  });
});
