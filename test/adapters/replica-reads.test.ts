import { expect } from 'chai';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/adapters/mysql/database.js';
import { DatabaseError } from '../../src/adapters/mysql/database-error.js';
import { PrometheusMetrics } from '../../src/adapters/metrics/prometheus-metrics.js';
import { migrateToLatest } from '../../src/adapters/mysql/migrate.js';
import { CURSOR_SECRET_NAME } from '../../src/adapters/mysql/mysql-cursor-keys.js';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import { openMysqlStorage, type MysqlStorage } from '../../src/adapters/mysql/mysql-storage.js';
import { ReadPositions } from '../../src/adapters/mysql/replica-reads.js';
import { parseSku } from '../../src/domain/sku.js';
import { fixtureCatalog } from '../fixtures/catalog-fixture.js';
import { importCatalog } from '../support/import.js';
import { startReplicatedMariadb, type ReplicatedMariadb } from '../support/mariadb-replication.js';
import { until } from '../support/redis-topologies.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { principalOf } from '../../src/domain/api-key.js';
import { tracingSettings } from '../../src/adapters/config/tracing-config.js';
import { startTracing } from '../../src/adapters/tracing/start-tracing.js';
import { runIn, tracing } from '../../src/adapters/tracing/tracing.js';
import { startOtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';

const DATABASE = 'catalog';
/** Short, so a replica held behind costs the test little; long enough for a caught-up one on a loaded machine. */
const WAIT_MS = 500;
const ACME_PROD = principalOf('acme-prod', 'acme', 'live');

describe('Reads from a replica (DATABASE_REPLICA_URLS), on a real MariaDB primary and GTID replica', function () {
  this.timeout(120_000);
  let pair: ReplicatedMariadb;
  let primary: Kysely<Database>;
  let storage: MysqlStorage | undefined;
  let proxy: TcpProxy | undefined;
  let positions: ReadPositions;
  let shared: boolean;

  before(async function () {
    pair = await startReplicatedMariadb({ databases: [DATABASE], replicas: 2 });
    primary = createMysqlDatabase(pair.primaryUrl(DATABASE), { queryTimeoutMs: 60_000 });
    await migrateToLatest(primary);
    await importCatalog(primary, fixtureCatalog());
    await pair.caughtUp();
  });
  beforeEach(function () {
    positions = new ReadPositions();
    shared = true;
  });
  afterEach(async function () {
    await storage?.close();
    storage = undefined;
    await proxy?.close();
    proxy = undefined;
    for (const index of pair.replicas.keys()) await pair.resumeApplying(index);
    await sql`update api_keys set revoked_at = null where id = ${ACME_PROD.keyId}`.execute(primary);
    await pair.caughtUp();
  });
  after(async function () {
    await primary.destroy();
    await pair.close();
  });

  /** The storage an instance serves from, reading the replica at `replicaUrl`. */
  const open = async (replicaUrl = pair.replicaUrl(DATABASE)): Promise<MysqlStorage> => {
    storage = await openMysqlStorage({ url: pair.primaryUrl(DATABASE), replicas: { urls: [replicaUrl], waitMs: WAIT_MS, positions, isShared: () => shared } });
    return storage;
  };
  const routerOf = (opened: MysqlStorage): NonNullable<MysqlStorage['replicas']> => opened.replicas!;
  /** Statements of these kinds the replica has run for clients (the test's own `show` is none of them): they rise only when reads reach it. */
  const replicaStatements = async (kinds: readonly string[] = ['Com_select', 'Com_stmt_execute'], index = 0): Promise<number> => {
    const rows = await pair.replicas[index]!.query('show global status');
    return rows.filter((row) => kinds.includes(String(row.Variable_name))).reduce((sum, row) => sum + Number(row.Value), 0);
  };
  const replicaReads = (): Promise<number> => replicaStatements();
  /** Revokes acme-prod on the primary, and tells the instance of it as a token would: its position. */
  const revokeOnPrimary = async (): Promise<void> => {
    await sql`update api_keys set revoked_at = now() where id = ${ACME_PROD.keyId}`.execute(primary);
    positions.seen(await pair.primaryPosition());
  };

  it('reads lookups, batches, the key set, the changes feed and the cursor key from the replica, as a user it refuses writes', async function () {
    const opened = await open();
    const before = await replicaReads();
    expect(await opened.catalog.findBySku('acme', parseSku('TENT-2P'))).to.not.equal(null);
    expect((await opened.catalog.findManyBySku('acme', [parseSku('TENT-2P'), parseSku('NOPE')])).map((answer) => answer !== null)).to.deep.equal([true, false]);
    const held: string[] = [];
    await opened.keys.readLiveKeys(() => (page) => held.push(...page.map((key) => key.keyId)));
    expect(held).to.include(ACME_PROD.keyId);
    expect((await opened.changes.read('acme', 0, 10)).entries.length).to.be.above(0);
    await opened.cursorKeys.cursorKey();
    expect(await replicaReads() - before).to.be.at.least(5);
    expect(routerOf(opened).primaryReads).to.deep.equal({ no_position: 0, lagging: 0, unreachable: 0 });
    // The replica refuses the service's user a write: nothing the service writes may go there.
    const replica = createMysqlDatabase(pair.replicaUrl(DATABASE));
    try {
      const error = await sql`update api_keys set label = label`.execute(replica).then(() => null, (caught: unknown) => caught);
      expect(error).to.be.instanceOf(DatabaseError).and.to.include({ failure: 'read only' });
    } finally {
      await replica.destroy();
    }
  });

  it('reads a change seen from the primary while the replica has not applied it, and from the replica again once it has', async function () {
    const opened = await open();
    const router = routerOf(opened);
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(true);
    await pair.stopApplying();
    // The control: a change the instance has not seen is not waited for, and the replica shows the key live.
    await sql`update api_keys set revoked_at = now() where id = ${ACME_PROD.keyId}`.execute(primary);
    expect(await opened.keys.isLive(ACME_PROD), 'a change not seen').to.equal(true);
    positions.seen(await pair.primaryPosition());
    // Seen: the replica's connection waits for the position, gives up, and the primary answers.
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(router.primaryReads.lagging).to.equal(1);
    expect(router.replicas[0]!.lagSeconds()).to.be.above(0);
    // Taken out: the next read goes to the primary without waiting again.
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(router.primaryReads.lagging).to.equal(2);
    await pair.resumeApplying();
    await until('the replica taking reads again', () => router.replicas[0]!.state === 'usable');
    const before = await replicaReads();
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(await replicaReads()).to.be.above(before);
    expect(router.primaryReads.lagging).to.equal(2);
    expect(router.replicas[0]!.lagSeconds()).to.equal(0);
  });

  it('shows each replica\'s lag and pool, and the reads sent to the primary by reason, in the metrics', async function () {
    const opened = await open();
    const metrics = new PrometheusMetrics();
    metrics.watchReplicas(routerOf(opened));
    const figures = async (): Promise<Record<string, number>> => Object.fromEntries((await metrics.registry.getMetricsAsJSON())
      .filter(({ name }) => name.startsWith('pcat_db_replica') || name === 'pcat_db_primary_reads_total')
      .flatMap(({ name, values }) => values.map(({ labels, value }) => [`${name}${JSON.stringify(labels)}`, value])));
    const replica = routerOf(opened).replicas[0]!.name;
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(true);
    await pair.stopApplying();
    await revokeOnPrimary();
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    const lagging = await figures();
    expect(lagging[`pcat_db_replica_lag_seconds{"replica":"${replica}"}`]).to.be.above(0);
    expect(lagging['pcat_db_primary_reads_total{"reason":"lagging"}']).to.equal(1);
    // One connection: lent to the background try that waits for the replica, or idle between tries.
    const connections = ['in_use', 'idle'].map((state) => lagging[`pcat_db_replica_pool_connections{"replica":"${replica}","state":"${state}"}`]!);
    expect(connections[0]! + connections[1]!).to.equal(1);
    expect(lagging[`pcat_db_replica_pool_waiting{"replica":"${replica}"}`]).to.equal(0);
    await pair.resumeApplying();
    await until('the replica taking reads again', () => routerOf(opened).replicas[0]!.state === 'usable');
    expect((await figures())[`pcat_db_replica_lag_seconds{"replica":"${replica}"}`]).to.equal(0);
  });

  it('waits once a change on each connection, not once a request', async function () {
    const opened = await open();
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(true);
    await revokeOnPrimary();
    // Each read a text statement, as the wait is: one connection lent one read at a time makes one wait for the one change.
    const before = await replicaStatements(['Com_select']);
    for (let i = 0; i < 20; i += 1) expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(await replicaStatements(['Com_select']) - before).to.equal(21);
    expect(routerOf(opened).primaryReads).to.deep.equal({ no_position: 0, lagging: 0, unreachable: 0 });
    expect(routerOf(opened).replicas[0]!.reachedVersion).to.equal(positions.version);
  });

  it('sends reads to the primary while changes cannot be seen, and waits for the primary\'s own position once one may have gone unseen', async function () {
    const opened = await open();
    shared = false;
    await pair.stopApplying();
    await sql`update api_keys set revoked_at = now() where id = ${ACME_PROD.keyId}`.execute(primary);
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(routerOf(opened).primaryReads.no_position).to.equal(1);
    // Back, with a change that may have gone unseen: the primary's position is read and waited for.
    shared = true;
    positions.unknown();
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(routerOf(opened).primaryReads).to.deep.equal({ no_position: 1, lagging: 1, unreachable: 0 });
  });

  it('tells a traced step where its read went: the replica and its wait, or the primary and why, with the wait for the primary\'s position a span of its own', async function () {
    const receiver = await startOtlpReceiver();
    const traces = await startTracing(tracingSettings({
      OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20',
    })!);
    try {
      const opened = await open();
      const on = tracing()!;
      /** A lookup in a step of its own, as a traced request's cache step makes it: that step's span's id. */
      const tracedLookup = async (name: string): Promise<string> => {
        const step = on.startRoot(name);
        try {
          await runIn(step, () => opened.catalog.findBySku('acme', parseSku('TENT-2P')));
        } finally {
          step.end();
        }
        return step.spanContext().spanId;
      };
      const onReplica = await tracedLookup('on the replica');
      await pair.stopApplying();
      await revokeOnPrimary();
      const lagging = await tracedLookup('while the replica lags');
      await pair.resumeApplying();
      await until('the replica taking reads again', () => routerOf(opened).replicas[0]!.state === 'usable');
      positions.unknown();
      const unknown = await tracedLookup('after a change may have gone unseen');
      const spans = await receiver.waitFor((received) => [onReplica, lagging, unknown].every((id) => received.some((span) => span.spanId === id)));
      const step = (id: string): ReceivedSpan => spans.find((span) => span.spanId === id)!;
      expect(step(onReplica).attributes).to.include({ 'pcat.db.target': 'replica', 'pcat.db.replica_wait_ms': WAIT_MS });
      expect(step(lagging).attributes).to.include({ 'pcat.db.target': 'primary', 'pcat.db.primary_reason': 'lagging' });
      expect(step(unknown).attributes).to.include({ 'pcat.db.target': 'replica' });
      const positionReads = spans.filter((span) => span.name === 'primary position read').map((span) => span.parentSpanId);
      // A new instance knows no position yet, nor one after a change may have gone unseen; the lagging step's was told.
      expect(positionReads, 'the wait for the primary\'s position, below each step that needed it').to.have.members([onReplica, unknown]);
      // Each lookup's statement: a span of its own, linked from the step that asked.
      for (const id of [onReplica, lagging, unknown]) {
        expect(spans.some((span) => span.name === 'mysql lookup' && span.links.some((link) => link.spanId === id)), `the statement linked from ${id}`).to.equal(true);
      }
    } finally {
      await traces.stop(2_000);
      await receiver.close();
    }
  });

  it('sends reads to the primary while the replica is out of reach, and to the replica again once it answers', async function () {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: pair.replica.port });
    const opened = await open(pair.replicaUrl(DATABASE).replace(`:${pair.replica.port}/`, `:${proxy.port}/`));
    const router = routerOf(opened);
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(true);
    // Dropped packets: the connection the pool holds goes silent, and new ones are never answered.
    proxy.blackHole();
    await revokeOnPrimary();
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(router.primaryReads.unreachable).to.equal(1);
    expect(router.replicas[0]!.state).to.equal('unreachable');
    // Taken out: the next read goes to the primary at once, without a timeout of its own.
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(router.primaryReads.unreachable).to.equal(2);
    proxy.restore();
    await until('the replica taking reads again', () => router.replicas[0]!.state === 'usable');
    const before = await replicaReads();
    expect(await opened.keys.isLive(ACME_PROD)).to.equal(false);
    expect(await replicaReads()).to.be.above(before);
    expect(router.primaryReads.unreachable).to.equal(2);
  });

  it('spreads reads over two replicas, and sends every read to the one that has applied a change while the other has not', async function () {
    storage = await openMysqlStorage({
      url: pair.primaryUrl(DATABASE), replicas: { urls: [pair.replicaUrl(DATABASE, 0), pair.replicaUrl(DATABASE, 1)], waitMs: WAIT_MS, positions, isShared: () => shared },
    });
    const router = routerOf(storage);
    const readsOn = (index: number): Promise<number> => replicaStatements(undefined, index);
    const before = [await readsOn(0), await readsOn(1)];
    for (let i = 0; i < 10; i += 1) expect(await storage.keys.isLive(ACME_PROD)).to.equal(true);
    expect(await readsOn(0)).to.be.above(before[0]!);
    expect(await readsOn(1)).to.be.above(before[1]!);
    await pair.stopApplying(1);
    await revokeOnPrimary();
    const behind = await readsOn(0);
    for (let i = 0; i < 10; i += 1) expect(await storage.keys.isLive(ACME_PROD)).to.equal(false);
    // The one read that met the lagging replica went to the primary; it is out, and the other took the rest.
    expect(router.primaryReads).to.deep.equal({ no_position: 0, lagging: 1, unreachable: 0 });
    expect(router.replicas.map((replica) => replica.state)).to.deep.equal(['usable', 'lagging']);
    expect(await readsOn(0) - behind).to.be.at.least(9);
    await pair.resumeApplying(1);
    await until('the second replica taking reads again', () => router.replicas[1]!.state === 'usable');
  });

  it('creates the cursor key on the primary when the replica has none, and reads it from the replica after', async function () {
    await sql`delete from service_secrets where name = ${CURSOR_SECRET_NAME}`.execute(primary);
    await pair.caughtUp();
    const opened = await open();
    const key = await opened.cursorKeys.cursorKey();
    const [row] = await primary.selectFrom('service_secrets').select('value').where('name', '=', CURSOR_SECRET_NAME).execute();
    expect(row?.value).to.equal(key.secret.toString('base64url'));
  });

  it('drops a connection to a primary that turned read-only, and writes through a new one once it takes writes', async function () {
    const writer = createMysqlDatabase(pair.primaryUrl(DATABASE), { connectionLimit: 1 });
    try {
      const connectionId = async (): Promise<number> => (await sql<{ id: number }>`select connection_id() as id`.execute(writer)).rows[0]!.id;
      const first = await connectionId();
      await pair.primary.admin(['set global read_only = 1']);
      const refused = await sql`update api_keys set label = label`.execute(writer).then(() => null, (caught: unknown) => caught);
      expect(refused).to.be.instanceOf(DatabaseError).and.to.include({ failure: 'read only', storageUnavailable: true });
      await pair.primary.admin(['set global read_only = 0']);
      await sql`update api_keys set label = label`.execute(writer);
      expect(await connectionId()).to.not.equal(first);
    } finally {
      await pair.primary.admin(['set global read_only = 0']);
      await writer.destroy();
    }
  });
});
