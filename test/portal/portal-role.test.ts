import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { importCatalog } from '../support/import.js';
import { freePort } from '../support/redis.js';
import { useTestDatabase } from '../support/mariadb.js';
import { startService, type ServiceProcess } from '../support/service-process.js';

interface Listening {
  readonly role: string;
  readonly url?: string;
  readonly portalUrl?: string;
}

interface Shared {
  readonly descriptors: { readonly limit: number | null; readonly api?: unknown; readonly portal?: unknown };
}

/** The JSON log line of `msg`, once the service has written it. */
async function logLine<T>(service: ServiceProcess, msg: string): Promise<T> {
  const match = await service.waitFor(new RegExp(`^.*"msg":"${msg}".*$`, 'm'), 30_000);
  return JSON.parse(match[0]) as T;
}

/* The API and the portal in processes of their own, on one MySQL database (ROLE). */
describe('ROLE: the API and the portal in processes of their own', function () {
  this.timeout(60_000);
  const testDb = useTestDatabase();
  const services: ServiceProcess[] = [];
  before(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
  });
  after(function () {
    for (const service of services.splice(0)) service.kill();
  });

  const start = (env: Record<string, string>): ServiceProcess => {
    const service = startService({ STORAGE: 'mysql', DATABASE_URL: testDb.url, ...env });
    services.push(service);
    return service;
  };

  it('ROLE=portal serves the portal and no API, with the portal\'s share of the descriptors only', async function () {
    const service = start({ ROLE: 'portal', PORTAL_PORT: String(await freePort()) });
    const shared = await logLine<Shared>(service, 'descriptors shared among the listeners');
    expect(shared.descriptors.api).to.equal(undefined);
    expect(shared.descriptors.portal).to.not.equal(undefined);
    const listening = await logLine<Listening>(service, 'listening');
    expect(listening.role).to.equal('portal');
    expect(listening.url).to.equal(undefined);
    expect((await fetch(`${listening.portalUrl!}/portal/login`)).status).to.equal(200);
  });

  it('ROLE=api serves the API and no portal, whatever PORTAL_PORT says', async function () {
    // The port is held by a stand-in for the whole test: a service that tried to open the portal
    // there would fail to start, and no other listener can be given the port meanwhile.
    const standIn = createServer((_req, res) => res.writeHead(418).end());
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    const portalPort = (standIn.address() as AddressInfo).port;
    try {
      const service = start({ ROLE: 'api', PORTAL_PORT: String(portalPort) });
      const listening = await logLine<Listening>(service, 'listening');
      expect(listening.role).to.equal('api');
      expect(listening.portalUrl).to.equal(undefined);
      expect((await fetch(`${listening.url!}/healthz`)).status).to.equal(200);
      const shared = await logLine<Shared>(service, 'descriptors shared among the listeners');
      expect(shared.descriptors.portal).to.equal(undefined);
      expect((await fetch(`http://127.0.0.1:${portalPort}/portal/login`)).status, 'the stand-in, not a portal').to.equal(418);
    } finally {
      standIn.closeAllConnections();
      await new Promise((resolve) => standIn.close(resolve));
    }
  });

  it('ROLE=portal on memory storage stops the start in one line', async function () {
    const service = startService({ ROLE: 'portal' });
    services.push(service);
    expect(await service.exited()).to.equal(1);
    expect(service.stderr().trim()).to.equal('partner-catalog-api: failed to start: ROLE: portal needs STORAGE=mysql: a portal in a process of its own shares keys with the API processes through the database');
  });
});
