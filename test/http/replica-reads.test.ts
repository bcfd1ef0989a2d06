import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEYS, refinedDocument } from '../fixtures/catalog-fixture.js';
import { cli } from '../support/cli-process.js';
import { seedFixtureCatalog, startReplicatedMariadb, type ReplicatedMariadb } from '../support/mariadb-replication.js';
import { PortalClient } from '../support/portal-server.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { until } from '../support/redis-topologies.js';
import { expectNoKeyInOutput } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/*
 * The stale case of reading a replica, replayed: two instances read a replica that stops applying
 * what the primary writes, while the operator imports a catalog and revokes a key on the primary
 * and announces both. A third instance reads the same replica as its only database, as an instance
 * did before replicas had a setting of their own: it shows the lag can be seen. Every answer of the
 * instances is recorded, through the lag and after the replica catches up.
 */

const DATABASE = 'catalog';
const API = '/api/v1/public';
const SKU_PATH = `${API}/sku/TENT-2P`;
const AN_HOUR_MS = '3600000';
const REFINED = 'Refined while the replica lagged.';
/** Short, so reads held behind the lagging replica reach the primary soon; far above a caught-up replica's wait. */
const WAIT_MS = '300';
const PASSWORD = 'a long enough passphrase';
const KEYS_PAGE = '/portal/settings/api-keys';

interface Answer {
  /** When the request was sent (performance.now()). */
  readonly sentAt: number;
  readonly instance: number;
  readonly ask: 'live' | 'revoked' | 'feed';
  readonly status: number;
  readonly transcript: string | undefined;
}

describe('instances reading a replica that lags while the operator imports and revokes on the primary', function () {
  this.timeout(180_000);
  const services: ServiceProcess[] = [];
  let pair: ReplicatedMariadb | undefined;
  let redis: RedisServerProcess | undefined;
  let dir = '';

  before(async function () {
    await requireRedis(this);
    pair = await startReplicatedMariadb({ databases: [DATABASE] });
    await seedFixtureCatalog(pair, DATABASE);
    redis = await startRedisServer();
    dir = mkdtempSync(join(tmpdir(), 'pcat-replica-'));
  });
  after(async function () {
    expectNoKeyInOutput(services);
    for (const service of services.splice(0)) service.kill();
    await redis?.kill();
    await pair?.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('serves no answer the import replaced, accepts no revoked key and answers every changes-feed page, on either instance', async function () {
    const replicated = pair!;
    const operatorEnv = { DATABASE_URL: replicated.primaryUrl(DATABASE), REDIS_URL: redis!.url };
    const issued = await cli(['keys', 'issue', '--partner', 'acme', '--json'], operatorEnv);
    expect(issued.code, issued.stderr).to.equal(0);
    const { id: revokedId, key: revokedKey } = issued.json() as { id: string; key: string };
    await replicated.caughtUp();
    const served = {
      STORAGE: 'mysql', RATE_LIMIT_STORE: 'redis', REDIS_URL: redis!.url, CACHE_TTL_MS: AN_HOUR_MS, WEBHOOK_POLL_MS: '60000', RATE_LIMIT_PER_MINUTE: '1000000',
    };
    const readingReplicas = [0, 1].map(() => startService({
      ...served, DATABASE_URL: replicated.primaryUrl(DATABASE), DATABASE_REPLICA_URLS: replicated.replicaUrl(DATABASE), DATABASE_REPLICA_WAIT_MS: WAIT_MS,
    }));
    // The control: the replica as its only database, as DATABASE_URL. It cannot write its key usage there, and says so.
    const control = startService({ ...served, DATABASE_URL: replicated.replicaUrl(DATABASE) });
    services.push(...readingReplicas, control);
    const urls = await Promise.all(services.map(async (s) => (await s.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!));

    const answers: Answer[] = [];
    let recording = true;
    const record = async (instance: number, ask: Answer['ask']): Promise<void> => {
      while (recording) {
        const sentAt = performance.now();
        const path = ask === 'feed' ? `${API}/changes` : SKU_PATH;
        const response = await fetch(`${urls[instance]!}${path}`, { headers: { 'X-API-Key': ask === 'revoked' ? revokedKey : KEYS.acme }, signal: AbortSignal.timeout(10_000) });
        const body = await response.json() as { data?: { product?: { pdp_urls: Array<{ json_ld: { transcript?: string } | null }> } } };
        answers.push({ sentAt, instance, ask, status: response.status, transcript: body.data?.product?.pdp_urls[0]?.json_ld?.transcript });
      }
    };
    const recorders = [0, 1, 2].flatMap((instance) => [record(instance, 'live'), record(instance, 'revoked'), record(instance, 'feed')]);
    const answered = (from: number, instance: number): number => answers.filter((a) => a.sentAt > from && a.instance === instance).length;
    const everyone = (from: number, count: number) => (): boolean => [0, 1, 2].every((instance) => answered(from, instance) >= count);
    try {
      await until('every instance answering', everyone(0, 30));

      // The replica receives what the primary writes from here, and applies none of it.
      await replicated.stopApplying();
      const changing = performance.now();
      const file = join(dir, 'refined.json');
      writeFileSync(file, JSON.stringify(refinedDocument(REFINED)));
      const imported = await cli(['import', file], operatorEnv);
      expect(imported.code, imported.stderr).to.equal(0);
      const revoked = await cli(['keys', 'revoke', revokedId], operatorEnv);
      expect(revoked.code, revoked.stderr).to.equal(0);
      const changed = performance.now();
      // Both replica readers meet the replica behind the changes they saw, and read the primary instead.
      for (const service of readingReplicas) await service.waitFor(/has not applied the changes seen within DATABASE_REPLICA_WAIT_MS/);
      await until('every instance answering through the lag', everyone(changed, 60));

      await replicated.resumeApplying();
      await replicated.caughtUp();
      for (const service of readingReplicas) await service.waitFor(/caught up and reachable; it takes reads again/);
      const caughtUp = performance.now();
      await until('every instance answering once the replica caught up', everyone(caughtUp, 60));
      recording = false;
      await Promise.all(recorders);

      const ofReaders = answers.filter((a) => a.instance < 2);
      const after = ofReaders.filter((a) => a.sentAt > changed);
      const stale = after.filter((a) => a.ask === 'live' && (a.status !== 200 || a.transcript !== REFINED));
      const revokedServed = after.filter((a) => a.ask === 'revoked' && a.status !== 401);
      const feedFailed = ofReaders.filter((a) => a.ask === 'feed' && a.status !== 200);
      const failed = ofReaders.filter((a) => a.status >= 500);
      expect({ stale: stale.length, revokedServed: revokedServed.length, feedFailed: feedFailed.length, failed: failed.length })
        .to.deep.equal({ stale: 0, revokedServed: 0, feedFailed: 0, failed: 0 });
      const before = ofReaders.filter((a) => a.sentAt < changing && a.ask !== 'feed');
      expect(before.length).to.be.above(0);
      expect(before.every((a) => a.status === 200 && a.transcript !== REFINED)).to.equal(true);
      // The control served what the replica held while it lagged: the old answer, and the revoked key.
      const controlDuringLag = answers.filter((a) => a.instance === 2 && a.sentAt > changed && a.sentAt < caughtUp);
      expect(controlDuringLag.filter((a) => a.ask === 'live' && a.transcript !== REFINED).length, 'stale answers of the control').to.be.above(0);
      expect(controlDuringLag.filter((a) => a.ask === 'revoked' && a.status === 200).length, 'revoked key accepted by the control').to.be.above(0);
    } finally {
      recording = false;
      await Promise.allSettled(recorders);
    }
  });

  it('answers the portal 503 and the CLI a clear error while the primary refuses writes, writes nothing, and writes once it takes them again', async function () {
    const replicated = pair!;
    const primaryUrl = replicated.primaryUrl(DATABASE);
    const portalUrl = `http://127.0.0.1:${await freePort()}`;
    const service = startService({ STORAGE: 'mysql', DATABASE_URL: primaryUrl, ROLE: 'portal', PORTAL_PORT: new URL(portalUrl).port });
    services.push(service);
    await service.waitFor(/"msg":"listening"/);
    const invited = await cli(['admins', 'invite', '--partner', 'acme', '--email', 'ada@acme.example', '--json'], { DATABASE_URL: primaryUrl, PORTAL_PUBLIC_URL: portalUrl });
    expect(invited.code, invited.stderr).to.equal(0);
    const invitePath = new URL((invited.json() as { invite_url: string }).invite_url).pathname;
    const ada = new PortalClient(portalUrl);
    const form = await ada.get(invitePath);
    expect((await ada.post(invitePath, { csrf: PortalClient.csrfOf(form), password: PASSWORD, confirm: PASSWORD })).status).to.equal(303);
    const csrf = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    const keysBefore = await cli(['keys', 'list', '--partner', 'acme', '--json'], { DATABASE_URL: primaryUrl });

    // What a former primary is after a failover, still behind the address: read-only.
    await replicated.primary.admin(['set global read_only = 1']);
    try {
      const refused = await ada.post(KEYS_PAGE, { csrf, label: 'during the failover' });
      expect([refused.status, refused.headers.get('retry-after')]).to.deep.equal([503, '2']);
      expect(refused.text).to.include('nothing was changed');
      await service.waitFor(/portal request failed: the database cannot be reached or written now/);
      const issued = await cli(['keys', 'issue', '--partner', 'acme'], { DATABASE_URL: primaryUrl });
      expect([issued.code, issued.stderr]).to.deep.equal([1, `error: DATABASE_URL: the server at 127.0.0.1:${replicated.primary.port} accepts no writes (ER_OPTION_PREVENTS_STATEMENT): ` +
        'it is a replica, or a former primary the address still leads to. DATABASE_URL must name the primary; after a failover, run the command again once the address leads to the new one\n']);
    } finally {
      await replicated.primary.admin(['set global read_only = 0']);
    }
    const keysDuring = await cli(['keys', 'list', '--partner', 'acme', '--json'], { DATABASE_URL: primaryUrl });
    expect(keysDuring.json()).to.deep.equal(keysBefore.json());
    // The primary takes writes again: the portal's pool opens a new connection and the key is made.
    expect((await ada.post(KEYS_PAGE, { csrf, label: 'after the failover' })).status).to.equal(303);
    expect(service.stdout() + service.stderr()).to.not.include('"level":50');
  });
});
