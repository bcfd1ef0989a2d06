import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import { fixtureCatalog, KEYS } from './fixtures/catalog-fixture.js';
import { cli } from './support/cli-process.js';
import { importCatalog } from './support/import.js';
import { startMariadbServer, type MariadbServer } from './support/mariadb-server.js';
import { startService, type ServiceProcess } from './support/service-process.js';
import { makeCertificates } from './support/tls-certificates.js';

/** The service's user on the server, and its two databases: the one the service serves, and the operator commands' own. */
const USER = 'pcat';
const SERVED = 'catalog';
const OPERATED = 'operated';

/** What the operator reads, shortened, when the certificate does not verify: it names the CA file and the host. */
const UNVERIFIED_CERTIFICATE = /: no authority this instance trusts signed it, or it is not for this host: name the PEM file of the authority that signed it in DATABASE_TLS_CA_FILE, or correct the host in DATABASE_URL\n$/;

describe('TLS to MySQL (DATABASE_TLS, DATABASE_TLS_CA_FILE), on a MariaDB that takes TLS connections only', function () {
  this.timeout(90_000);
  const password = `Pw-${randomBytes(8).toString('hex')}`;
  let server: MariadbServer | undefined;
  let certificatesDir = '';
  let caFile = '';
  const running: ServiceProcess[] = [];

  /** A URL on the test's server as the service's user, at `host`: 127.0.0.1 and localhost are on its certificate, 127.0.0.2 is not. */
  const urlOf = (database: string, host = '127.0.0.1'): string => `mysql://${USER}:${password}@${host}:${server!.port}/${database}`;
  const withTls = (): Record<string, string> => ({ DATABASE_TLS: 'true', DATABASE_TLS_CA_FILE: caFile });
  /** The server as the messages name it. */
  const at = (host = '127.0.0.1'): string => `${host}:${server!.port}`;

  before(async function () {
    certificatesDir = mkdtempSync(join(tmpdir(), 'pcat-mysql-tls-'));
    const certificates = makeCertificates(certificatesDir);
    caFile = certificates.ca;
    server = await startMariadbServer({
      bind: ['127.0.0.1', '127.0.0.2'],
      args: [`--ssl-ca=${certificates.ca}`, `--ssl-cert=${certificates.cert}`, `--ssl-key=${certificates.key}`, '--require-secure-transport=ON'],
    });
    await server.admin([
      ...[SERVED, OPERATED].map((database) => `create database ${database} character set utf8mb4 collate utf8mb4_bin`),
      `create user '${USER}'@'%' identified by '${password}'`,
      ...[SERVED, OPERATED].map((database) => `grant all privileges on ${database}.* to '${USER}'@'%'`),
    ]);
    // The catalog the service serves, written through the adapter, over TLS too.
    const db = createMysqlDatabase(urlOf(SERVED), { queryTimeoutMs: 60_000, tls: { ca: readFileSync(caFile) } });
    try {
      await migrateToLatest(db);
      await importCatalog(db, fixtureCatalog());
    } finally {
      await db.destroy();
    }
  });
  afterEach(function () {
    for (const service of running.splice(0)) service.kill();
  });
  after(async function () {
    await server?.close();
    if (certificatesDir !== '') await rm(certificatesDir, { recursive: true, force: true });
  });

  /** The service started with these settings besides MySQL storage on the served database. */
  const start = (settings: Record<string, string>, url = urlOf(SERVED)): ServiceProcess => {
    const service = startService({ STORAGE: 'mysql', DATABASE_URL: url, ...settings });
    running.push(service);
    return service;
  };

  it('starts and answers a lookup and /readyz with DATABASE_TLS=true, the certificate verified against DATABASE_TLS_CA_FILE and the address', async function () {
    const service = start(withTls());
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const lookup = await fetch(`${url!}/api/v1/public/sku/TENT-2P`, { headers: { 'X-API-Key': KEYS.acme } });
    expect(lookup.status).to.equal(200);
    expect(((await lookup.json()) as { data: { sku: string } }).data.sku).to.equal('TENT-2P');
    expect((await fetch(`${url!}/readyz`)).status).to.equal(200);
  });

  it('runs the operator commands over TLS, the server reached by name and by address', async function () {
    const commands = [['migrate'], ['import', 'catalogs/demo-catalog.json', '--quiet'], ['keys', 'issue', '--partner', 'demo', '--json']];
    for (const args of commands) {
      const run = await cli(args, { DATABASE_URL: urlOf(OPERATED, 'localhost'), ...withTls() });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).to.equal(0);
    }
    const listed = await cli(['keys', 'list', '--partner', 'demo', '--json'], { DATABASE_URL: urlOf(OPERATED), ...withTls() });
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.json()).to.be.an('array').that.is.not.empty;
  });

  it('without DATABASE_TLS, the start and the commands stop with a message that names DATABASE_TLS, never the password', async function () {
    // MariaDB refuses a login without TLS as it refuses a wrong password.
    const refused = `DATABASE_URL: the server at ${at()} refused user "${USER}" (ER_ACCESS_DENIED_ERROR): the user or the password in DATABASE_URL is wrong, ` +
      'or the user may not connect from this machine, or the server takes TLS connections only: set DATABASE_TLS=true\n';
    const run = await cli(['migrate'], { DATABASE_URL: urlOf(OPERATED) });
    expect([run.code, run.stderr]).to.deep.equal([1, `error: ${refused}`]);
    const service = start({});
    expect(await service.exited()).to.equal(1);
    expect(service.stderr()).to.equal(`partner-catalog-api: failed to start: ${refused}`);
    expect(service.stdout() + service.stderr() + run.stdout + run.stderr).to.not.include(password);
  });

  it('on the system\'s authorities (no DATABASE_TLS_CA_FILE), the start and the commands stop with a message that names DATABASE_TLS_CA_FILE', async function () {
    const untrusted = `the certificate of the server at ${at()} does not verify (HANDSHAKE_SSL_ERROR: `;
    const run = await cli(['keys', 'list', '--partner', 'demo'], { DATABASE_URL: urlOf(OPERATED), DATABASE_TLS: 'true' });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.satisfy((text: string) => text.startsWith(`error: DATABASE_URL: ${untrusted}`)).and.match(UNVERIFIED_CERTIFICATE);
    const service = start({ DATABASE_TLS: 'true' });
    expect(await service.exited()).to.equal(1);
    expect(service.stderr()).to.satisfy((text: string) => text.startsWith(`partner-catalog-api: failed to start: DATABASE_URL: ${untrusted}`)).and.match(UNVERIFIED_CERTIFICATE);
    expect(service.stdout() + service.stderr() + run.stdout + run.stderr).to.not.include(password);
  });

  it('refuses the certificate at an address it does not name (127.0.0.2), though a trusted authority signed it', async function () {
    const run = await cli(['migrate'], { DATABASE_URL: urlOf(OPERATED, '127.0.0.2'), ...withTls() });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.satisfy((text: string) => text.startsWith(`error: DATABASE_URL: the certificate of the server at ${at('127.0.0.2')} does not verify`))
      .and.include('127.0.0.2 is not in the cert').and.match(UNVERIFIED_CERTIFICATE);
    const service = start(withTls(), urlOf(SERVED, '127.0.0.2'));
    expect(await service.exited()).to.equal(1);
    expect(service.stderr()).to.satisfy((text: string) => text.startsWith(`partner-catalog-api: failed to start: DATABASE_URL: the certificate of the server at ${at('127.0.0.2')} does not verify`))
      .and.include('127.0.0.2 is not in the cert').and.match(UNVERIFIED_CERTIFICATE);
  });

  it('stops the start and the commands naming DATABASE_TLS_CA_FILE when the file cannot be read', async function () {
    const missing = join(certificatesDir, 'missing.pem');
    const unreadable = `DATABASE_TLS_CA_FILE: cannot read ${missing} (ENOENT: no such file or directory, open '${missing}'): name a PEM file of the certificate authorities to trust\n`;
    const run = await cli(['migrate'], { DATABASE_URL: urlOf(OPERATED), DATABASE_TLS: 'true', DATABASE_TLS_CA_FILE: missing });
    expect([run.code, run.stderr]).to.deep.equal([1, `error: ${unreadable}`]);
    const service = start({ DATABASE_TLS: 'true', DATABASE_TLS_CA_FILE: missing });
    expect(await service.exited()).to.equal(1);
    expect(service.stderr()).to.equal(`partner-catalog-api: failed to start: ${unreadable}`);
  });
});
