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
/** Where the count script reads acme's catalog token. */
const TOKEN_KEY = 'pcat:{v}:catalog:acme';

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
    dir = mkdtempSync(join(tmpdir(), 'pcat-failover-'));
  });
  beforeEach(async function () {
    // Each test's import refines the fixture's answer.
    await importCatalog(testDb.db, fixtureCatalog());
  });
  afterEach(async function () {
    expectNoKeyInOutput(services);
    for (const service of services.splice(0)) service.kill();
    await proxy?.close();
    proxy = undefined;
    for (const client of clients.splice(0)) client.disconnect();
    for (const server of servers.splice(0)) await server.kill();
  });
  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Two instances and the operator on one address (the proxy) in front of a primary whose replica follows it; a key issued, to be revoked. */
  async function startWorld(): Promise<{ toPrimary: Redis; toReplica: Redis; replicaPort: number; urls: string[]; operatorEnv: Record<string, string>; revoked: { id: string; key: string } }> {
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
    const started = [0, 1].map(() => startService({
      STORAGE: 'mysql', DATABASE_URL: testDb.url, RATE_LIMIT_STORE: 'redis', REDIS_URL: redisUrl, CACHE_TTL_MS: AN_HOUR_MS, WEBHOOK_POLL_MS: '60000',
      // Every answer is a lookup's: no key reaches its limit while the test records.
      RATE_LIMIT_PER_MINUTE: '1000000',
    }));
    services.push(...started);
    const urls = await Promise.all(started.map(async (s) => (await s.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!));
    return { toPrimary, toReplica, replicaPort: portOf(replica), urls, operatorEnv, revoked: issued.json() as { id: string; key: string } };
  }

  /** Every answer of both instances, for both keys, one request after another on each, while recording. */
  class Recorder {
    readonly answers: Answer[] = [];
    private recording = false;
    private running: Promise<void>[] = [];

    constructor(private readonly urls: readonly string[], private readonly revokedKey: string) {}

    start(): void {
      this.recording = true;
      this.running = [0, 1].flatMap((instance) => [this.record(instance, 'live'), this.record(instance, 'revoked')]);
    }

    async stop(): Promise<void> {
      this.recording = false;
      await Promise.allSettled(this.running);
    }

    answered(from: number, instance: number): number {
      return this.answers.filter((a) => a.sentAt > from && a.instance === instance).length;
    }

    private async record(instance: number, key: Answer['key']): Promise<void> {
      while (this.recording) {
        const sentAt = performance.now();
        const response = await fetch(`${this.urls[instance]!}${SKU_PATH}`, {
          headers: { 'X-API-Key': key === 'live' ? KEYS.acme : this.revokedKey }, signal: AbortSignal.timeout(5_000),
        });
        const body = await response.json() as { data?: { product: { pdp_urls: Array<{ json_ld: { transcript?: string } | null }> } } };
        this.answers.push({ sentAt, instance, key, status: response.status, transcript: body.data?.product.pdp_urls[0]?.json_ld?.transcript });
      }
    }
  }

  /** The import and the revocation, announced on the primary alone: its replica stopped following first. */
  async function changeOnThePrimaryAlone(world: Awaited<ReturnType<typeof startWorld>>): Promise<void> {
    await until('the replica holding what the primary holds', async () => (await world.toReplica.get(TOKEN_KEY)) === (await world.toPrimary.get(TOKEN_KEY)) && (await world.toPrimary.get(TOKEN_KEY)) !== null);
    await world.toReplica.call('REPLICAOF', 'NO', 'ONE');
    const file = join(dir, 'refined.json');
    writeFileSync(file, JSON.stringify(refinedDocument(REFINED)));
    const imported = await cli(['import', file], world.operatorEnv);
    expect(imported.code, imported.stderr).to.equal(0);
    const revoked = await cli(['keys', 'revoke', world.revoked.id], world.operatorEnv);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(await world.toReplica.get(TOKEN_KEY), 'the announcement is lost').to.not.equal(await world.toPrimary.get(TOKEN_KEY));
  }

  /** Nothing stale, nothing revoked served, nothing failed among the answers to requests sent after `changed`. */
  function expectFresh(answers: readonly Answer[], changed: number): void {
    const after = answers.filter((a) => a.sentAt > changed);
    const stale = after.filter((a) => a.key === 'live' && (a.status !== 200 || a.transcript !== REFINED));
    const revokedServed = after.filter((a) => a.key === 'revoked' && a.status !== 401);
    const failed = answers.filter((a) => a.status >= 500);
    expect({ stale: stale.length, revokedServed: revokedServed.length, failed: failed.length }).to.deep.equal({ stale: 0, revokedServed: 0, failed: 0 });
  }

  it('serves no answer the import replaced and accepts no revoked key, on either instance, after the switch', async function () {
    const world = await startWorld();
    const recorder = new Recorder(world.urls, world.revoked.key);
    recorder.start();
    try {
      // Both instances hold the answer and both keys before anything changes.
      await until('both instances answering', () => recorder.answered(0, 0) >= 20 && recorder.answered(0, 1) >= 20);
      const changing = performance.now();
      await changeOnThePrimaryAlone(world);
      const changed = performance.now();
      await until('both instances answering after the change', () => recorder.answered(changed, 0) >= 20 && recorder.answered(changed, 1) >= 20);

      // The failover, between two requests: the same address, the replica behind it, without the
      // announcements. No request is waiting on Redis, so no call fails: only the replies tell.
      await recorder.stop();
      proxy!.switchTo({ host: '127.0.0.1', port: world.replicaPort });
      // The instances' idle connections find the new server by themselves, before the next request.
      await until('both instances connected to the replica', async () => String(await world.toReplica.call('CLIENT', 'LIST')).trim().split('\n').length >= 3);
      const switched = performance.now();
      recorder.start();
      // Until both count on the replica, and have answered well past it.
      await until('both instances counting on the replica', async () => (await world.toReplica.zcard('pcat:instances')) === 2 && recorder.answered(switched, 0) >= 40 && recorder.answered(switched, 1) >= 40);
      await recorder.stop();

      expectFresh(recorder.answers, changed);
      // Before the change, both keys were served, and the old answer with them.
      const before = recorder.answers.filter((a) => a.sentAt < changing);
      expect(before.length).to.be.above(0);
      expect(before.every((a) => a.status === 200 && a.transcript !== REFINED)).to.equal(true);
      // The switch was seen by both: each re-read its keys and answers, as after a loss (the
      // replies' replication id tells it, or a read on a connection that had not yet reconnected).
      // (Log lines reach the test when the process writes them out: waited for, not read at once.)
      for (const service of services) await service.waitFor(/Redis switched|Redis unavailable/);
      expect(recorder.answers.filter((a) => a.sentAt > switched).length).to.be.at.least(80);
    } finally {
      await recorder.stop();
    }
  });

  it('serves no answer the import replaced and accepts no revoked key with requests running straight through the switch, no request between the change and it', async function () {
    const world = await startWorld();
    const recorder = new Recorder(world.urls, world.revoked.key);
    recorder.start();
    try {
      await until('both instances answering', () => recorder.answered(0, 0) >= 20 && recorder.answered(0, 1) >= 20);
      // No request between the change and the switch: neither instance has seen the change on the primary.
      await recorder.stop();
      await changeOnThePrimaryAlone(world);
      const changed = performance.now();
      // Requests go on through the switch: the ones under way when the address moves lose their
      // calls to the old primary, and none waits for the instances to reach the new one.
      recorder.start();
      proxy!.switchTo({ host: '127.0.0.1', port: world.replicaPort });
      await until('both instances counting on the replica', async () => (await world.toReplica.zcard('pcat:instances')) === 2 && recorder.answered(changed, 0) >= 60 && recorder.answered(changed, 1) >= 60);
      await recorder.stop();

      expectFresh(recorder.answers, changed);
      for (const service of services) await service.waitFor(/Redis switched|Redis unavailable/);
    } finally {
      await recorder.stop();
    }
  });
});
