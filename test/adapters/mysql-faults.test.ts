import { expect } from 'chai';
import { createServer, Socket, type Server } from 'node:net';
import { inspect } from 'node:util';
import { sql } from 'kysely';
import { createConnection } from 'mysql2/promise';
import { DatabaseError } from '../../src/adapters/mysql/database-error.js';
import { importCatalog } from '../support/import.js';
import { MysqlApiKeyStore } from '../../src/adapters/mysql/mysql-api-key-store.js';
import { createMysqlDatabase, openMeasuredMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import { openMysqlStorage } from '../../src/adapters/mysql/mysql-storage.js';
import { MysqlReadinessProbe } from '../../src/adapters/mysql/mysql-readiness-probe.js';
import { hashApiKey, principalOf } from '../../src/domain/api-key.js';
import type { Sku } from '../../src/domain/sku.js';
import { fixtureCatalog, KEYS } from '../fixtures/catalog-fixture.js';
import { useTestDatabase } from '../support/mariadb.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { until } from '../support/redis-topologies.js';

/** A TCP server on an ephemeral port; `serve` decides what each connection gets. */
async function listen(serve: (socket: Socket) => void, port = 0): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serve(socket);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, sockets };
}

async function stop(listening: { server: Server; sockets: Set<Socket> }): Promise<void> {
  for (const socket of listening.sockets) socket.destroy();
  await new Promise((resolve) => listening.server.close(resolve));
}

const elapsed = async (work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> => {
  const start = Date.now();
  let error: unknown = null;
  try {
    await work();
  } catch (caught) {
    error = caught;
  }
  return { ms: Date.now() - start, error };
};

describe('MySQL under faults', function () {
  const testDb = useTestDatabase();
  this.timeout(30_000);

  it('fails a statement that outlives the query timeout, then serves the next one', async function () {
    const db = createMysqlDatabase(testDb.url, { queryTimeoutMs: 300 });
    try {
      const slow = await elapsed(() => sql`select sleep(3)`.execute(db));
      expect(slow.error).to.be.instanceOf(Error);
      expect(slow.ms).to.be.below(1_500);
      expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).to.deep.equal([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('fails a lookup within seconds and reports not ready when the server never answers', async function () {
    const silent = await listen(() => undefined);
    const storage = await openMysqlStorage({ url: `mysql://root@127.0.0.1:${silent.port}/x` });
    try {
      const lookup = await elapsed(() => storage.catalog.findBySku('acme', 'TENT-2P' as Sku));
      expect(lookup.error).to.be.instanceOf(Error);
      expect(lookup.ms).to.be.below(4_000);
      const probe = await elapsed(async () => expect(await storage.readiness.isReady()).to.equal(false));
      expect(probe.error).to.equal(null);
      expect(probe.ms).to.be.below(2_000);
    } finally {
      await storage.close();
      await stop(silent);
    }
  });

  it('recovers by itself when the database comes back', async function () {
    const target = new URL(testDb.url);
    const forward = (socket: Socket): void => {
      const upstream = new Socket().connect(Number(target.port), target.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
      socket.on('close', () => upstream.destroy());
      upstream.on('close', () => socket.destroy());
    };
    let proxy = await listen(forward);
    const port = proxy.port;
    const viaProxy = new URL(testDb.url);
    viaProxy.port = String(port);
    const db = createMysqlDatabase(viaProxy.toString());
    const probe = new MysqlReadinessProbe(db);
    try {
      expect(await probe.isReady()).to.equal(true);
      await stop(proxy);
      expect(await probe.isReady()).to.equal(false);
      proxy = await listen(forward, port);
      expect(await probe.isReady()).to.equal(true);
    } finally {
      await db.destroy();
      await stop(proxy);
    }
  });
});

/** Whether the promise is still pending, without waiting for it. */
async function pending(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([promise.then(() => null, () => null), Promise.resolve(marker)])) === marker;
}

/** The MySQL commands in one connection's client-to-server bytes: command byte and payload. */
function commandsIn(chunks: readonly Buffer[]): { command: number; payload: Buffer }[] {
  const bytes = Buffer.concat(chunks);
  const commands: { command: number; payload: Buffer }[] = [];
  // Packet: 3-byte little-endian length, sequence byte, payload; sequence 0 starts a command.
  for (let at = 0; at + 4 <= bytes.length;) {
    const length = bytes.readUIntLE(at, 3);
    const payload = bytes.subarray(at + 4, at + 4 + length);
    if (bytes[at + 3] === 0 && payload.length > 0) commands.push({ command: payload[0]!, payload: payload.subarray(1) });
    at += 4 + length;
  }
  return commands;
}

const COM_QUERY = 0x03;
const COM_STMT_PREPARE = 0x16;
const COM_STMT_EXECUTE = 0x17;

describe('MySQL pool bounds and statement secrecy', function () {
  const testDb = useTestDatabase();
  this.timeout(60_000);
  const hash = hashApiKey(KEYS.acme);

  before(async function () {
    await importCatalog(testDb.db, fixtureCatalog());
  });

  /** The serving storage, reaching this suite's database through a TCP proxy the test can black-hole. */
  async function storageBehindProxy() {
    const target = new URL(testDb.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const viaProxy = new URL(testDb.url);
    viaProxy.port = String(proxy.port);
    return { proxy, storage: await openMysqlStorage({ url: viaProxy.toString() }) };
  }

  it('lets a bounded number of callers wait for a connection and fails the next one at once', async function () {
    const db = createMysqlDatabase(testDb.url, { connectionLimit: 2, queueLimit: 3, queryTimeoutMs: 10_000 });
    try {
      const busy = [1, 2].map(() => sql`select sleep(2)`.execute(db));
      const queued = [1, 2, 3].map(() => sql`select 1`.execute(db));
      const refused = await elapsed(() => sql`select 1`.execute(db));
      expect(refused.error).to.be.instanceOf(DatabaseError);
      expect((refused.error as DatabaseError).failure).to.equal('queue full');
      // Refused while the two sleeps still held both connections, so without waiting for one.
      for (const statement of [...busy, ...queued]) expect(await pending(statement)).to.equal(true);
      await Promise.all([...busy, ...queued]);
    } finally {
      await db.destroy();
    }
  });

  it('adds up the seconds callers wait for a connection, those still waiting included', async function () {
    const { db, poolUse } = openMeasuredMysqlDatabase(testDb.url, { connectionLimit: 1, queryTimeoutMs: 60_000 });
    try {
      expect(poolUse().waitedSeconds).to.equal(0);
      // The only connection, held until the test lets it go: the two callers below wait for it as long as the test says.
      let letGo = (): void => undefined;
      let holding = false;
      const held = db.connection().execute(async (connection) => {
        await sql`select 1`.execute(connection);
        holding = true;
        await new Promise<void>((resolve) => { letGo = resolve; });
      });
      await until('the connection held', () => holding);
      const queuedAt = performance.now();
      const queued = [1, 2].map(() => sql`select 1`.execute(db));
      await until('two callers waiting', () => poolUse().waiting === 2);
      // Whatever the machine's load: two callers, each waiting since they were queued.
      const before = performance.now();
      const during = poolUse();
      const after = performance.now();
      expect(during.waitedSeconds).to.be.within((2 * (before - queuedAt)) / 1_000 - 0.01, (2 * (after - queuedAt)) / 1_000 + 0.01);
      await until('the wait grown', () => poolUse().waitedSeconds > during.waitedSeconds);
      const releasedAt = performance.now();
      letGo();
      await Promise.all([held, ...queued]);
      const done = performance.now();
      const ended = poolUse();
      expect(ended.waiting).to.equal(0);
      // Each waited from its queueing until the connection came back, and no longer.
      expect(ended.waitedSeconds).to.be.within((2 * (releasedAt - queuedAt)) / 1_000 - 0.01, (2 * (done - queuedAt)) / 1_000 + 0.01);
      expect(poolUse().waitedSeconds).to.equal(ended.waitedSeconds);
    } finally {
      await db.destroy();
    }
  });

  it('counts the wait for a connection against the statement deadline, and passes on a connection that came too late', async function () {
    const db = createMysqlDatabase(testDb.url, { connectionLimit: 1, queryTimeoutMs: 1_000 });
    try {
      let letGo = (): void => undefined;
      const held = db.connection().execute(async (connection) => {
        await sql`select 1`.execute(connection);
        await new Promise<void>((resolve) => { letGo = resolve; });
      });
      // Waits 700 ms for the only connection, then needs 800 ms more: 1.5 s in all, past its 1 s deadline,
      // although the statement alone would fit.
      const late = elapsed(() => sql`select sleep(0.8)`.execute(db));
      await new Promise((resolve) => setTimeout(resolve, 700));
      letGo();
      await held;
      const answer = await late;
      expect(answer.error).to.be.instanceOf(DatabaseError);
      expect((answer.error as DatabaseError).failure).to.equal('no answer in time');

      // A caller that never got a connection fails by its deadline; the connection, when it comes, serves the next one.
      const held2 = db.connection().execute(async () => {
        await new Promise<void>((resolve) => { letGo = resolve; });
      });
      const starved = await elapsed(() => sql`select 1`.execute(db));
      expect((starved.error as DatabaseError).failure).to.equal('no connection in time');
      letGo();
      await held2;
      expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).to.deep.equal([{ one: 1 }]);
    } finally {
      await db.destroy();
    }
  });

  it('fails every caller by its deadline while the path is black-holed, and lends no connection lost in it once it is back', async function () {
    const { proxy, storage } = await storageBehindProxy();
    try {
      // Ten connections open and idle.
      const warm = await Promise.all(Array.from({ length: 10 }, () => storage.keys.findActiveByHash(hash)));
      expect(warm.every((principal) => principal?.keyId === 'acme-prod')).to.equal(true);

      proxy.blackHole();
      const during = await Promise.all(Array.from({ length: 50 }, () => elapsed(() => storage.keys.findActiveByHash(hash))));
      for (const answer of during) {
        expect(answer.error).to.be.instanceOf(DatabaseError);
        expect(answer.ms).to.be.below(5_000);
      }
      expect(await storage.readiness.isReady()).to.equal(false);

      proxy.restore();
      // Every connection that was open across the black hole is lost; none may be lent again.
      const deadline = Date.now() + 10_000;
      let after: { ms: number; error: unknown }[] = [];
      do {
        after = await Promise.all(Array.from({ length: 10 }, () => elapsed(() => storage.keys.findActiveByHash(hash))));
      } while (after.some((answer) => answer.error !== null) && Date.now() < deadline);
      expect(after.map((answer) => answer.error)).to.deep.equal(Array(10).fill(null));
      expect(await storage.readiness.isReady()).to.equal(true);
    } finally {
      await storage.close();
      await proxy.close();
    }
  });

  it('after a failure, replaces the connections that sat idle through it instead of waiting a timeout on each', async function () {
    const { proxy, storage } = await storageBehindProxy();
    try {
      await Promise.all(Array.from({ length: 10 }, () => storage.keys.findActiveByHash(hash)));
      proxy.blackHole();
      // One read finds out; the nine other connections sat idle and are as lost as its own.
      const failed = await elapsed(() => storage.keys.findActiveByHash(hash));
      expect((failed.error as DatabaseError).failure).to.equal('no answer in time');
      proxy.restore();
      const after = await Promise.all(Array.from({ length: 9 }, () => elapsed(() => storage.keys.findActiveByHash(hash))));
      expect(after.map((answer) => answer.error)).to.deep.equal(Array(9).fill(null));
    } finally {
      await storage.close();
      await proxy.close();
    }
  });

  it('reads a key with its hash as a bound value: the statement text holds ? and never the hash', async function () {
    const target = new URL(testDb.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, { capture: true });
    const viaProxy = new URL(testDb.url);
    viaProxy.port = String(proxy.port);
    const db = createMysqlDatabase(viaProxy.toString());
    try {
      expect(await new MysqlApiKeyStore(db).findActiveByHash(hash)).to.deep.equal(principalOf('acme-prod', 'acme', 'live'));
    } finally {
      await db.destroy();
      await proxy.close();
    }
    const commands = proxy.sent().flatMap(commandsIn);
    const texts = commands.filter((c) => c.command === COM_QUERY || c.command === COM_STMT_PREPARE).map((c) => c.payload.toString('utf8'));
    expect(texts.filter((text) => text.includes('`sha256` = ?'))).to.have.length(1);
    expect(texts.filter((text) => text.includes(hash))).to.deep.equal([]);
    // The hash did travel, as a value of its own in the execute command.
    expect(commands.filter((c) => c.command === COM_STMT_EXECUTE && c.payload.includes(hash))).to.have.length(1);
  });

  it('fails a key read killed on the server with an error naming only its kind and code', async function () {
    const db = createMysqlDatabase(testDb.url, { queryTimeoutMs: 20_000 });
    const locker = await createConnection({ uri: testDb.url });
    const name = new URL(testDb.url).pathname.slice(1);
    try {
      const keys = new MysqlApiKeyStore(db);
      await keys.findActiveByHash(hash);
      await locker.query('lock tables api_keys write');
      const read = keys.findActiveByHash(hash).then(() => null, (error: unknown) => error);
      let id: number | undefined;
      for (let tries = 0; id === undefined && tries < 200; tries += 1) {
        const [rows] = await locker.query<({ id: number; info: string } & import('mysql2').RowDataPacket)[]>(
          "select id, info from information_schema.processlist where db = ? and info like '%api_keys%' and command = 'Execute'",
          [name],
        );
        if (rows[0] !== undefined) {
          id = rows[0].id;
          // The server itself sees the statement with its placeholder.
          expect(rows[0].info).to.include('`sha256` = ?').and.not.include(hash);
        } else await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(id, 'the key read waiting on the lock').to.be.a('number');
      await locker.query(`kill query ${String(id)}`);
      const error = await read;
      await locker.query('unlock tables');
      expect(error).to.be.instanceOf(DatabaseError);
      expect((error as DatabaseError).message).to.equal('database: query interrupted (ER_QUERY_INTERRUPTED)');
      const everything = `${inspect(error, { depth: 5, showHidden: true })} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`;
      expect(everything).to.not.include(hash);
      expect(everything).to.not.match(/select|api_keys|sha256/i);
      // The connection survived the kill and serves the next read.
      expect(await keys.findActiveByHash(hash)).to.deep.equal(principalOf('acme-prod', 'acme', 'live'));
    } finally {
      await locker.query('unlock tables').catch(() => undefined);
      await locker.end();
      await db.destroy();
    }
  });
});
