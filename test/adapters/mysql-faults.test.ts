import { expect } from 'chai';
import { createServer, Socket, type Server } from 'node:net';
import { sql } from 'kysely';
import { createMysqlDatabase } from '../../src/adapters/mysql/mysql-database.js';
import { openMysqlStorage } from '../../src/adapters/mysql/mysql-storage.js';
import { MysqlReadinessProbe } from '../../src/adapters/mysql/mysql-readiness-probe.js';
import type { Sku } from '../../src/domain/sku.js';
import { useTestDatabase } from '../support/mariadb.js';

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
