import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LookupResult } from '../src/domain/lookup-result.js';
import { fixtureDocument, KEYS } from './fixtures/catalog-fixture.js';
import type { ServiceScript } from './support/script-command.js';
import { startService, type ServiceProcess } from './support/service-process.js';

// Production's start (compiled, from dist/). The demo's `npm start` (tsx) runs the same sources: it is
// started by test/entry-points.test.ts on every Node.js line, and by one-process's signal tests.
const script: ServiceScript = 'start:prod';
describe(`the service as a user starts it (npm run ${script})`, function () {
  this.timeout(30_000);
  const running: ServiceProcess[] = [];
  const start = (env: Record<string, string> = {}): ServiceProcess => {
    const service = startService(env, script);
    running.push(service);
    return service;
  };
  afterEach(function () {
    for (const service of running.splice(0)) service.kill();
  });

  it('on the embedded default, prints a demo key and a curl line that answers 200 with a populated json_ld', async function () {
    const service = start();
    const [, url, path] = await service.waitFor(/curl -s -H 'Authorization: Bearer pcat_live_[A-Za-z0-9]{40}' (http:\/\/[^\s/]+)(\S+)/);
    const [, key] = /(pcat_live_[A-Za-z0-9]{40})/.exec(service.stdout())!;
    const response = await fetch(`${url!}${path!}`, { headers: { Authorization: `Bearer ${key!}` } });
    expect(response.status).to.equal(200);
    const { data } = (await response.json()) as { data: LookupResult };
    expect(data.product.pdp_urls.some((e) => e.json_ld !== null)).to.equal(true);
    expect(data.product.videos.length).to.be.greaterThan(0);
    // The key is printed once, for the person at the terminal, and never in a log line.
    const logLines = service.stdout().split('\n').filter((l) => l.startsWith('{'));
    expect(logLines.join('\n')).to.not.include(key!);
    // Its test key's line answers the error it names, on purpose.
    const [, testKey, testPath] = /curl -s -H 'Authorization: Bearer (pcat_test_[A-Za-z0-9]{40})' http:\/\/[^\s/]+(\S+)/.exec(service.stdout())!;
    const asked = await fetch(`${url!}${testPath!}`, { headers: { Authorization: `Bearer ${testKey!}` } });
    expect(asked.status).to.equal(429);
    expect(asked.headers.get('retry-after')).to.match(/^[1-9][0-9]?$/);
  });

  it('serves the catalog named by CATALOG_FILE, without a demo key', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'pcat-'));
    const file = join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify(fixtureDocument()));
    const service = start({ CATALOG_FILE: file });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const response = await fetch(`${url!}/api/v1/public/sku/GLOBEX-ONLY`, { headers: { 'X-API-Key': KEYS.globex } });
    expect(response.status).to.equal(200);
    expect(service.stdout()).to.not.include('Demo catalog loaded');
  });

  it('names in /openapi.json the contact and terms that OPENAPI_CONTACT_* and OPENAPI_TERMS_URL give', async function () {
    const service = start({
      PUBLIC_BASE_URL: 'https://catalog.acme.example', OPENAPI_CONTACT_NAME: 'Acme Catalog Team', OPENAPI_CONTACT_EMAIL: 'api-support@acme.example',
      OPENAPI_CONTACT_URL: 'https://acme.example/support', OPENAPI_TERMS_URL: 'https://acme.example/partner-terms',
    });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const { info } = (await (await fetch(`${url!}/openapi.json`)).json()) as { info: Record<string, unknown> };
    expect(info).to.deep.include({
      contact: { name: 'Acme Catalog Team', email: 'api-support@acme.example', url: 'https://acme.example/support' },
      license: { name: 'Partner agreement', url: 'https://acme.example/partner-terms' },
      termsOfService: 'https://acme.example/partner-terms',
    });
  });

  it('refuses to start on a bad variable, naming it in one line', async function () {
    const service = start({ RATE_LIMIT_PER_MINUTE: 'lots' });
    expect(await service.exited()).to.not.equal(0);
    expect(service.stderr().trim().split('\n')).to.have.length(1);
    expect(service.stderr()).to.include('RATE_LIMIT_PER_MINUTE: must be a whole number');
  });

  it('refuses to start on a bad catalog file, listing every problem by JSON path', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'pcat-'));
    const file = join(dir, 'bad.json');
    const document = fixtureDocument() as { partners: { products: Record<string, unknown>[] }[] };
    document.partners[0]!.products[0]!.sku = 'BAD SKU';
    document.partners[1]!.products[1]!.image = 'not a url';
    writeFileSync(file, JSON.stringify(document));
    const service = start({ CATALOG_FILE: file });
    expect(await service.exited()).to.not.equal(0);
    expect(service.stderr()).to.include('partners[0].products[0].sku: must be 1 to 50').and.include('partners[1].products[1].image: must be an absolute http(s) URL');
    expect(service.stderr()).to.not.match(/\n\s+at /);
  });

  it('refuses to start on a missing catalog file', async function () {
    const service = start({ CATALOG_FILE: '/nonexistent/catalog.json' });
    expect(await service.exited()).to.not.equal(0);
    expect(service.stderr()).to.include('CATALOG_FILE: cannot read catalog file /nonexistent/catalog.json: no such file (ENOENT)');
  });

  it('on SIGTERM, answers /readyz 503 at once and goes on serving, on the connections it holds and on new ones, for SHUTDOWN_DRAIN_MS', async function () {
    // A drain longer than any test: what it serves is checked while it lasts, whatever the machine's load.
    const service = start({ SHUTDOWN_DRAIN_MS: '600000' });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const [, key] = await service.waitFor(/(pcat_live_[A-Za-z0-9]{40})/);
    const held = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string, agent: Agent | false): Promise<{ status: number; connection: string | undefined }> => new Promise((resolve, reject) => {
      request(`${url!}${path}`, { agent, headers: { 'X-API-Key': key! } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
      }).on('error', reject).end();
    });
    try {
      expect(await get('/api/v1/public/sku/TENT-2P', held)).to.deep.equal({ status: 200, connection: 'keep-alive' });
      expect((await get('/readyz', false)).status).to.equal(200);
      service.child.kill('SIGTERM');
      await service.waitFor(/not ready; serving on while load balancers take this instance out/);
      expect((await get('/readyz', false)).status, '/readyz once told to stop').to.equal(503);
      expect(await get('/api/v1/public/sku/TENT-2P', held), 'a lookup on a connection it held').to.deep.equal({ status: 200, connection: 'keep-alive' });
      expect((await get('/api/v1/public/sku/TENT-2P', false)).status, 'a lookup on a new connection').to.equal(200);
      expect((await get('/healthz', false)).status, 'alive all the while').to.equal(200);
    } finally {
      held.destroy();
    }
    // A second signal ends it at once.
    service.child.kill('SIGTERM');
    expect(await service.exited()).to.equal(null);
  });

  it('on SIGTERM, finishes requests in flight and exits 0', async function () {
    // No drain: the requests are still in flight when the listener closes.
    const service = start({ SHUTDOWN_DRAIN_MS: '0' });
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const [, key] = await service.waitFor(/(pcat_live_[A-Za-z0-9]{40})/);
    // 20 connections the server has accepted (each has had an answer), so the requests below are on
    // connections it holds, written before the signal, whatever the machine's load.
    const agent = new Agent({ keepAlive: true, maxSockets: 20 });
    const lookup = (): Promise<number> => new Promise((resolve, reject) => {
      request(`${url!}/api/v1/public/sku/TENT-2P`, { agent, headers: { 'X-API-Key': key! } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      }).on('error', reject).end();
    });
    try {
      expect(await Promise.all(Array.from({ length: 20 }, lookup))).to.deep.equal(Array<number>(20).fill(200));
      const inFlight = Array.from({ length: 20 }, lookup);
      service.child.kill('SIGTERM');
      // Every request under way when the signal came is finished, none cut off.
      expect(await Promise.all(inFlight)).to.deep.equal(Array<number>(20).fill(200));
    } finally {
      agent.destroy();
    }
    expect(await service.exited()).to.equal(0);
    expect(service.stdout()).to.include('"msg":"stopped"');
  });
});
