import { expect } from 'chai';
import { importCatalog } from '../support/import.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { cli } from '../support/cli-process.js';
import { useTestDatabase } from '../support/mariadb.js';
import { PortalClient } from '../support/portal-server.js';
import { freePort, requireRedis, startRedisServer, type RedisServerProcess } from '../support/redis.js';
import { expectNoKeyInOutput } from '../support/service-logs.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

/*
 * Two real service processes on one MariaDB database and one redis-server, answers and keys held
 * for an hour: a key made or revoked in one instance's portal must reach the other through the
 * announcement alone, on its next request.
 */

const KEYS_PAGE = '/portal/settings/api-keys';
const PASSWORD = 'a long enough passphrase';

describe('the portal on two instances sharing MySQL and Redis', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  const services: ServiceProcess[] = [];
  let redis: RedisServerProcess | undefined;

  before(async function () {
    await requireRedis(this);
    await importCatalog(testDb.db, fixtureCatalog());
    redis = await startRedisServer();
  });
  after(async function () {
    expectNoKeyInOutput(services);
    for (const service of services.splice(0)) service.kill();
    await redis?.kill();
  });

  const status = async (url: string, key: string): Promise<number> =>
    (await fetch(`${url}/api/v1/public/sku/TENT-2P`, { headers: { 'X-API-Key': key }, signal: AbortSignal.timeout(5_000) })).status;

  it('serves a key created in one instance\'s portal on the other at once, and refuses it there on the request after it is revoked', async function () {
    const portalPort = await freePort();
    const env = { STORAGE: 'mysql', DATABASE_URL: testDb.url, RATE_LIMIT_STORE: 'redis', REDIS_URL: redis!.url, CACHE_TTL_MS: '3600000' };
    const first = startService({ ...env, PORTAL_PORT: String(portalPort) });
    const second = startService(env);
    services.push(first, second);
    const [apiA, apiB] = await Promise.all([first, second].map(async (s) => (await s.waitFor(/"url":"(http:\/\/[^"]+)"/))[1]!));
    const portalUrl = `http://127.0.0.1:${portalPort}`;

    const invited = await cli(['admins', 'invite', '--partner', 'acme', '--email', 'ada@acme.example', '--json'], { DATABASE_URL: testDb.url, PORTAL_PUBLIC_URL: portalUrl });
    expect(invited.code, invited.stderr).to.equal(0);
    const invitePath = new URL((invited.json() as { invite_url: string }).invite_url).pathname;
    const ada = new PortalClient(portalUrl);
    const form = await ada.get(invitePath);
    expect((await ada.post(invitePath, { csrf: PortalClient.csrfOf(form), password: PASSWORD, confirm: PASSWORD })).status).to.equal(303);

    const csrf = PortalClient.csrfOf(await ada.get(KEYS_PAGE));
    expect((await ada.post(KEYS_PAGE, { csrf, label: 'two instances' })).status).to.equal(303);
    const key = /value="(pcat_live_[A-Za-z0-9]{40})"/.exec((await ada.get(KEYS_PAGE)).text)?.[1];
    expect(key).to.be.a('string');
    const keyId = (await testDb.db.selectFrom('api_keys').select('id').where('label', '=', 'two instances').executeTakeFirstOrThrow()).id;
    for (const url of [apiB!, apiA!, apiB!]) expect(await status(url, key!), url).to.equal(200);

    expect((await ada.post(`${KEYS_PAGE}/${keyId}/revoke`, { csrf })).status).to.equal(303);
    expect(await status(apiB!, key!)).to.equal(401);
    expect(await status(apiA!, key!)).to.equal(401);
  });
});
