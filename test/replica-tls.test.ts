import { expect } from 'chai';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEYS } from './fixtures/catalog-fixture.js';
import { seedFixtureCatalog, startReplicatedMariadb, type ReplicatedMariadb } from './support/mariadb-replication.js';
import { requireRedis, startRedisServer, type RedisServerProcess } from './support/redis.js';
import { startService, type ServiceProcess } from './support/service-process.js';
import { makeCertificates } from './support/tls-certificates.js';

const DATABASE = 'catalog';

describe('TLS to read replicas (DATABASE_TLS with DATABASE_REPLICA_URLS), on a primary and replica that take TLS connections only', function () {
  this.timeout(120_000);
  let pair: ReplicatedMariadb | undefined;
  let redis: RedisServerProcess | undefined;
  let certificatesDir = '';
  let caFile = '';
  const running: ServiceProcess[] = [];

  before(async function () {
    await requireRedis(this);
    certificatesDir = mkdtempSync(join(tmpdir(), 'pcat-replica-tls-'));
    const certificates = makeCertificates(certificatesDir);
    caFile = certificates.ca;
    pair = await startReplicatedMariadb({
      databases: [DATABASE],
      bind: ['127.0.0.1', '127.0.0.2'],
      tlsArgs: [`--ssl-ca=${certificates.ca}`, `--ssl-cert=${certificates.cert}`, `--ssl-key=${certificates.key}`, '--require-secure-transport=ON'],
    });
    await seedFixtureCatalog(pair, DATABASE, { ca: readFileSync(caFile) });
    redis = await startRedisServer();
  });
  afterEach(function () {
    for (const service of running.splice(0)) service.kill();
  });
  after(async function () {
    await redis?.kill();
    await pair?.close();
    if (certificatesDir !== '') await rm(certificatesDir, { recursive: true, force: true });
  });

  const start = (replicaUrl: string): ServiceProcess => {
    const service = startService({
      STORAGE: 'mysql', DATABASE_URL: pair!.primaryUrl(DATABASE), DATABASE_REPLICA_URLS: replicaUrl, DATABASE_TLS: 'true', DATABASE_TLS_CA_FILE: caFile,
      RATE_LIMIT_STORE: 'redis', REDIS_URL: redis!.url,
    });
    running.push(service);
    return service;
  };
  /** Reads the replica has run for clients. */
  const replicaReads = async (): Promise<number> => {
    const rows = await pair!.replica.query('show global status');
    return rows.filter((row) => ['Com_select', 'Com_stmt_execute'].includes(String(row.Variable_name))).reduce((sum, row) => sum + Number(row.Value), 0);
  };

  it('reads the replica over TLS, its certificate verified, and answers', async function () {
    const service = start(pair!.replicaUrl(DATABASE));
    const [, url] = await service.waitFor(/"url":"(http:\/\/[^"]+)"/);
    const before = await replicaReads();
    const lookup = await fetch(`${url!}/api/v1/public/sku/TENT-2P`, { headers: { 'X-API-Key': KEYS.acme } });
    expect(lookup.status).to.equal(200);
    expect(await replicaReads()).to.be.above(before);
  });

  it('stops the start naming the replica in DATABASE_REPLICA_URLS when its certificate is not for the address it is reached at', async function () {
    const replicaPort = pair!.replica.port;
    const service = start(pair!.replicaUrl(DATABASE).replace('@127.0.0.1:', '@127.0.0.2:'));
    expect(await service.exited()).to.equal(1);
    expect(service.stderr()).to.satisfy((text: string) => text.startsWith(
      `partner-catalog-api: failed to start: DATABASE_REPLICA_URLS: replica 1 of 1: the certificate of the server at 127.0.0.2:${replicaPort} does not verify`,
    )).and.include('127.0.0.2 is not in the cert').and.include('or correct the host in DATABASE_REPLICA_URLS');
  });
});
