import { expect } from 'chai';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { setTimeout as sleep } from 'node:timers/promises';
import { TIMEOUTS } from '../../src/adapters/timeouts.js';
import { importCatalog } from '../support/import.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';
import { useTestDatabase } from '../support/mariadb.js';
import { expectNoKeyInOutput, logLines, type LogLine } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/*
 * The real service on MySQL storage, its database behind a TCP proxy of the test's own that
 * black-holes the path: every client gets its JSON 503 within 5 s whatever the
 * concurrency, failures are summed up in the log, and lookups come back with the database.
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';
const CLIENTS = 256;
/** What the issue promises a client while the database is unreachable. */
const ANSWER_WITHIN_MS = 5_000;

interface Answer {
  readonly status: number;
  readonly error: unknown;
  readonly retryAfter: string | null;
  readonly ms: number;
}

async function ask(url: string, path = SKU_PATH): Promise<Answer> {
  const started = Date.now();
  // Far beyond the promise, so a late answer is measured rather than cut off.
  const response = await fetch(`${url}${path}`, { headers: { 'X-API-Key': KEYS.acme }, signal: AbortSignal.timeout(30_000) });
  const body = (await response.json()) as { error?: unknown };
  return { status: response.status, error: body.error, retryAfter: response.headers.get('retry-after'), ms: Date.now() - started };
}

describe('the service when its database is cut off', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  let service: ServiceProcess | undefined;
  let proxy: TcpProxy | undefined;

  before(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
  });
  afterEach(async function () {
    service?.kill();
    service = undefined;
    await proxy?.close();
    proxy = undefined;
  });

  async function start(databaseUrl: string): Promise<string> {
    // Every client comes from 127.0.0.1 here: the per-address connection limit must not answer for the database.
    service = startService({ STORAGE: 'mysql', DATABASE_URL: databaseUrl, MAX_CONNECTIONS_PER_ADDRESS: '1024' });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    return url!;
  }

  it(`answers each of ${CLIENTS} clients with a JSON 503 and Retry-After within 5 s while the path is black-holed, says not ready, counts its failures in a summary, and serves again soon after`, async function () {
    const target = new URL(testDb.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const viaProxy = new URL(testDb.url);
    viaProxy.port = String(proxy.port);
    const url = await start(viaProxy.toString());
    for (let i = 0; i < 20; i += 1) expect((await ask(url)).status).to.equal(200);
    expect((await ask(url, '/readyz')).status).to.equal(200);

    proxy.blackHole();
    // Two waves: the first finds connections open, the second a pool that already knows.
    const answers: Answer[] = [];
    for (let wave = 0; wave < 2; wave += 1) {
      answers.push(...await Promise.all(Array.from({ length: CLIENTS }, () => ask(url))));
    }
    for (const answer of answers) {
      // Storage out of reach is a moment's unavailability: 503 with a time to retry, never a 500.
      expect(answer.status, JSON.stringify(answer)).to.equal(503);
      expect(answer.error, JSON.stringify(answer)).to.equal('service_unavailable');
      expect(answer.retryAfter, JSON.stringify(answer)).to.equal(String(TIMEOUTS.storageRetryAfterSeconds));
      expect(answer.ms, JSON.stringify(answer)).to.be.below(ANSWER_WITHIN_MS);
    }
    const readiness = await ask(url, '/readyz');
    expect(readiness.status).to.equal(503);
    expect(readiness.ms).to.be.below(ANSWER_WITHIN_MS);

    proxy.restore();
    const restored = Date.now();
    let back: Answer | undefined;
    const afterCut: Answer[] = [];
    for (let tries = 0; tries < 100 && back === undefined; tries += 1) {
      const answer = await ask(url);
      if (answer.status === 200) back = answer;
      else {
        afterCut.push(answer);
        await sleep(100);
      }
    }
    expect(back, 'a lookup answered once the database was back').to.not.equal(undefined);
    // Within a second or two of the return; the margin is for a busy machine.
    expect(Date.now() - restored).to.be.below(3_000);
    expect((await ask(url, '/readyz')).status).to.equal(200);

    // Every failed request is in the log, but as one full line per kind and summaries with counts.
    const failed = [...answers, ...afterCut].filter((a) => a.status === 503).length;
    expect(failed).to.be.above(CLIENTS);
    const full = (): LogLine[] => logLines(service!).filter((l) => l.msg === 'unexpected error');
    const summaries = (): LogLine[] => logLines(service!).filter((l) => l.msg === 'unexpected error repeated');
    const accounted = (): number => full().length + summaries().reduce((sum, l) => sum + (l.count as number), 0);
    // A window's summary is written when the window closes, 10 s after its first failure.
    const deadline = Date.now() + 25_000;
    while (accounted() < failed && Date.now() < deadline) await sleep(200);
    expect(accounted()).to.equal(failed);
    expect(full().length, JSON.stringify(full().map((l) => l.kind))).to.be.below(8);
    expect(summaries().length).to.be.at.least(1);
    for (const summary of summaries()) expect(summary.kind).to.match(/^DatabaseError: database: /);
    expectNoKeyInOutput([service!]);
  });

  it('logs a key read killed on the server (KILL QUERY) without the key, its hash or the statement', async function () {
    const url = await start(testDb.url);
    expect((await ask(url)).status).to.equal(200);
    const database = new URL(testDb.url).pathname.slice(1);
    const killedLine = (): LogLine | undefined => logLines(service!).find((l) => (l.err as { code?: unknown } | undefined)?.code === 'ER_QUERY_INTERRUPTED');
    const locker = await createConnection({ uri: testDb.url });
    try {
      // The kill races the read's 1 s deadline; on a busy machine the deadline may win a round.
      for (let round = 0; round < 3 && killedLine() === undefined; round += 1) {
        await locker.query('lock tables api_keys write');
        const answer = ask(url);
        let id: number | undefined;
        for (let tries = 0; id === undefined && tries < 100; tries += 1) {
          const [rows] = await locker.query<RowDataPacket[]>(
            "select id from information_schema.processlist where db = ? and info like '%api_keys%' and id <> connection_id()",
            [database],
          );
          id = rows[0]?.id as number | undefined;
          if (id === undefined) await sleep(10);
        }
        if (id !== undefined) await locker.query(`kill query ${String(id)}`).catch(() => undefined);
        const failed = await answer;
        await locker.query('unlock tables');
        expect(failed.status).to.equal(503);
        expect(failed.error).to.equal('service_unavailable');
        const deadline = Date.now() + 2_000;
        while (killedLine() === undefined && Date.now() < deadline) await sleep(50);
      }
    } finally {
      await locker.query('unlock tables');
      await locker.end();
    }
    expect((await ask(url)).status).to.equal(200);
    expect(killedLine()?.err, 'the killed read in the log').to.deep.include({ message: 'database: query interrupted (ER_QUERY_INTERRUPTED)' });
    expect(service!.stdout()).to.not.match(/select|api_keys|sha256|sqlMessage/i);
    expectNoKeyInOutput([service!]);
  });
});
