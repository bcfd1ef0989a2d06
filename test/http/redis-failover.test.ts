import { expect } from 'chai';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureCatalog, KEYS, refinedDocument } from '../fixtures/catalog-fixture.js';
import { cli } from '../support/cli-process.js';
import { importCatalog } from '../support/import.js';
import { useTestDatabase } from '../support/mariadb.js';
import { requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { portOf, until } from '../support/redis-topologies.js';
import { expectNoKeyInOutput } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/*
 * A managed Redis failing over, replayed: the instances and the operator reach Redis at one address
 * (a proxy), the replica stops following the primary before an import and a revocation are
 * announced, and then the address leads to the replica instead. The announcements are lost with
 * the old primary, and the replica holds the tokens from before them. Every answer of two instances
 * is recorded, before and after the switch.
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';
const AN_HOUR_MS = '3600000';
const REFINED = 'Refined before the failover.';

interface Answer {
  /** When the request was sent (performance.now()). */
  readonly sentAt: number;
  readonly instance: number;
  readonly key: 'live' | 'revoked';
  readonly status: number;
  readonly transcript: string | undefined;
}

describe('a Redis failover that loses the last announcements, behind the address the instances know', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  const services: ServiceProcess[] = [];
  const servers: RedisServerProcess[] = [];
  const clients: Redis[] = [];
  let proxy: TcpProxy | undefined;
  let dir = '';

  before(async function () {
    await requireRedis(this);
    await importCatalog(testDb.db, fixtureCatalog());
    dir = mkdtempSync(join(tmpdir(), 'pcat-failover-'));
  });
  after(async function () {
    expectNoKeyInOutput(services);
    for (const service of services.splice(0)) service.kill();
    await proxy?.close();
    for (const client of clients) client.disconnect();
    for (const server of servers) await server.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves no answer the import replaced and accepts no revoked key, on either instance, after the switch', async function () {
    const fast = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];
    const primary = await startRedisServer(undefined, fast);
    const replica = await startRedisServer(undefined, [...fast, '--replicaof', '127.0.0.1', String(portOf(primary))]);
    servers.push(primary, replica);
    const [toPrimary, toReplica] = [new Redis(primary.url), new Redis(replica.url)];
    clients.push(toPrimary, toReplica);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: portOf(primary) });
    const redisUrl = `redis://127.0.0.1:${proxy.port}`;
    const operatorEnv = { DATABASE_URL: testDb.url, REDIS_URL: redisUrl };

    const issued = await cli(['keys', 'issue', '--partner', 'acme', '--json'], operatorEnv);
    expect(issued.code, issued.stderr).to.equal(0);
    const { id: revokedId, key: revokedKey } = issued.json() as { id: string; key: string };
    const started = [0, 1].map(() => startService({
      STORAGE: 'mysql', DATABASE_URL: testDb.url, RATE_LIMIT_STORE: 'redis', REDIS_URL: redisUrl, CACHE_TTL_MS: AN_HOUR_MS, WEBHOOK_POLL_MS: '60000',
      // Every answer is a lookup's: no key reaches its limit while the test records.
      RATE_LIMIT_PER_MINUTE: '1000000',
    }));
    services.push(...started);
    const urls = await Promise.all(started.map(async (s) => (await s.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!));

    // Every answer of both instances, for both keys, one request after another on each.
    const answers: Answer[] = [];
    let recording = true;
    const record = async (instance: number, key: Answer['key']): Promise<void> => {
      while (recording) {
        const sentAt = performance.now();
        const response = await fetch(`${urls[instance]!}${SKU_PATH}`, { headers: { 'X-API-Key': key === 'live' ? KEYS.acme : revokedKey }, signal: AbortSignal.timeout(5_000) });
        const body = await response.json() as { data?: { product: { pdp_urls: Array<{ json_ld: { transcript?: string } | null }> } } };
        answers.push({ sentAt, instance, key, status: response.status, transcript: body.data?.product.pdp_urls[0]?.json_ld?.transcript });
      }
    };
    const startRecording = (): Promise<void>[] => {
      recording = true;
      return [0, 1].flatMap((instance) => [record(instance, 'live'), record(instance, 'revoked')]);
    };
    let recorders = startRecording();
    const answered = (from: number, instance: number): number => answers.filter((a) => a.sentAt > from && a.instance === instance).length;
    try {
      // Both instances hold the answer and both keys before anything changes.
      await until('both instances answering', () => answered(0, 0) >= 20 && answered(0, 1) >= 20);
      const tokenKey = 'pcat:{v}:catalog:acme';
      await until('the replica holding what the primary holds', async () => (await toReplica.get(tokenKey)) === (await toPrimary.get(tokenKey)) && (await toPrimary.get(tokenKey)) !== null);

      // The replica stops following: what is announced from here reaches the primary alone.
      await toReplica.call('REPLICAOF', 'NO', 'ONE');
      const changing = performance.now();
      const file = join(dir, 'refined.json');
      writeFileSync(file, JSON.stringify(refinedDocument(REFINED)));
      const imported = await cli(['import', file], operatorEnv);
      expect(imported.code, imported.stderr).to.equal(0);
      const revoked = await cli(['keys', 'revoke', revokedId], operatorEnv);
      expect(revoked.code, revoked.stderr).to.equal(0);
      const changed = performance.now();
      await until('both instances answering after the change', () => answered(changed, 0) >= 20 && answered(changed, 1) >= 20);

      // The failover, between two requests: the same address, the replica behind it, without the
      // announcements. No request is waiting on Redis, so no call fails: only the replies tell.
      recording = false;
      await Promise.all(recorders);
      proxy.switchTo({ host: '127.0.0.1', port: portOf(replica) });
      // The instances' idle connections find the new server by themselves, before the next request.
      await until('both instances connected to the replica', async () => String(await toReplica.call('CLIENT', 'LIST')).trim().split('\n').length >= 3);
      const switched = performance.now();
      recorders = startRecording();
      expect(await toReplica.get(tokenKey), 'the announcement is lost').to.not.equal(await toPrimary.get(tokenKey));
      // Until both count on the replica, and have answered well past it.
      await until('both instances counting on the replica', async () => (await toReplica.zcard('pcat:instances')) === 2 && answered(switched, 0) >= 40 && answered(switched, 1) >= 40);
      recording = false;
      await Promise.all(recorders);

      const after = answers.filter((a) => a.sentAt > changed);
      const stale = after.filter((a) => a.key === 'live' && (a.status !== 200 || a.transcript !== REFINED));
      const revokedServed = after.filter((a) => a.key === 'revoked' && a.status !== 401);
      const failed = answers.filter((a) => a.status >= 500);
      expect({ stale: stale.length, revokedServed: revokedServed.length, failed: failed.length }).to.deep.equal({ stale: 0, revokedServed: 0, failed: 0 });
      // Before the change, both keys were served, and the old answer with them.
      const before = answers.filter((a) => a.sentAt < changing);
      expect(before.length).to.be.above(0);
      expect(before.every((a) => a.status === 200 && a.transcript !== REFINED)).to.equal(true);
      // The switch was seen by both: each re-read its keys and answers, as after a loss (the
      // replies' replication id tells it, or a read on a connection that had not yet reconnected).
      // (Log lines reach the test when the process writes them out: waited for, not read at once.)
      for (const service of services) await service.waitFor(/Redis switched|Redis unavailable/);
      expect(answers.filter((a) => a.sentAt > switched).length).to.be.at.least(80);
    } finally {
      recording = false;
      await Promise.allSettled(recorders);
    }
  });
});
