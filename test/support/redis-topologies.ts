import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { createServer } from 'node:net';
import { freePort, startRedisServer, startSentinel, type RedisServerProcess } from './redis.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const run = promisify(execFile);

/** A server as the settings name it; `password` when it asks for one. */
export interface Server {
  readonly host: string;
  readonly port: number;
  readonly password?: string;
}

export const portOf = (server: RedisServerProcess): number => Number(new URL(server.url).port);

/** Polls a state (never a fixed wait for an event): a sentinel's view, a cluster's slots. */
export async function until(what: string, holds: () => Promise<boolean> | boolean, tries = 3_000): Promise<void> {
  for (let i = 0; i < tries; i += 1) {
    if (await holds()) return;
    await sleep(10);
  }
  throw new Error(`never came: ${what}`);
}

/** Asks a server one command on a connection of its own. */
export async function ask(server: Server, ...command: string[]): Promise<unknown> {
  const client = new Redis({ host: server.host, port: server.port, password: server.password, maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(command[0]!, ...command.slice(1));
  } finally {
    client.disconnect();
  }
}

/** A primary, its replica and three sentinels watching them, as Sentinel runs in production. */
export interface SentinelTopology {
  readonly name: string;
  readonly sentinels: readonly Server[];
  /** The data servers by the port they are known at (the primary's proxy's, then the replica's own); their processes, to kill or pause. */
  readonly servers: ReadonlyMap<number, RedisServerProcess>;
  /**
   * The primary's address as everyone knows it (the sentinels, the replica, the clients): a proxy,
   * whose replication connection can be cut alone, so the replica misses what the primary is sent
   * from then on (`cutReplication`). Sentinel sees the replica follow the address it knows.
   */
  cutReplication(): void;
  /** The port of the primary the sentinels name now. */
  primaryPort(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Starts the topology and resolves once every sentinel knows the other two and the replica, and
 * the replica holds the primary's data: a failover can then happen. With `cuttable`, the primary
 * is known at a proxy's address (see `cutReplication`); without, at its own. With `passwords`, the
 * data servers ask for `data` (and the replica logs in to the primary with it), the sentinels for
 * `sentinels`.
 */
export async function startSentinelTopology(options: { name?: string; cuttable?: boolean; passwords?: { data: string; sentinels: string } } = {}): Promise<SentinelTopology> {
  const name = options.name ?? 'mymaster';
  const { passwords } = options;
  const stops: (() => Promise<void>)[] = [];
  const close = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    // Replicas sync at once (diskless, no delay), not 5 s after they ask.
    const fast = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0', ...(passwords === undefined ? [] : ['--requirepass', passwords.data, '--masterauth', passwords.data])];
    const primary = await startRedisServer(undefined, fast);
    stops.push(() => primary.kill());
    let proxy: TcpProxy | undefined;
    if (options.cuttable === true) {
      proxy = await startTcpProxy({ host: '127.0.0.1', port: portOf(primary) }, { capture: true });
      stops.push(() => proxy!.close());
    }
    const primaryPort = proxy?.port ?? portOf(primary);
    const replica = await startRedisServer(undefined, [...fast, '--replicaof', '127.0.0.1', String(primaryPort)]);
    stops.push(() => replica.kill());
    const sentinelProcesses = await Promise.all([0, 1, 2].map(() => startSentinel(primaryPort, name, { data: passwords?.data, own: passwords?.sentinels })));
    for (const sentinel of sentinelProcesses) stops.push(() => sentinel.kill());
    const sentinels = sentinelProcesses.map((sentinel) => ({ host: '127.0.0.1', port: portOf(sentinel), ...(passwords === undefined ? {} : { password: passwords.sentinels }) }));
    const replicaServer = { host: '127.0.0.1', port: portOf(replica), ...(passwords === undefined ? {} : { password: passwords.data }) };
    await until('the replica in sync', async () => /master_link_status:up/.test(String(await ask(replicaServer, 'INFO', 'replication'))));
    for (const sentinel of sentinels) {
      await until('each sentinel knowing the others and the replica', async () => {
        const others = await ask(sentinel, 'SENTINEL', 'SENTINELS', name) as unknown[];
        const replicas = await ask(sentinel, 'SENTINEL', 'REPLICAS', name) as unknown[];
        return others.length === 2 && replicas.length === 1;
      });
    }
    return {
      name,
      sentinels,
      servers: new Map([[primaryPort, primary], [portOf(replica), replica]]),
      // The replica's connection is the one that asked the primary for its data.
      cutReplication: () => {
        if (proxy === undefined) throw new Error('a topology started without cuttable: true has no replication to cut');
        proxy.blackHoleWhere((sent) => sent.includes('PSYNC'));
      },
      primaryPort: async () => Number((await ask(sentinels[0]!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name) as string[])[1]),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A Redis Cluster of three primaries and no replicas. */
export interface ClusterTopology {
  readonly nodes: readonly Server[];
  readonly processes: readonly RedisServerProcess[];
  close(): Promise<void>;
}

/** A server certificate and the authority that signed it, as PEM files. */
export interface TlsFiles {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * Starts three cluster-enabled servers, joins them with `redis-cli --cluster create`, and resolves
 * once every node says the cluster is ok. With `tls`, the nodes speak TLS only, to clients and to
 * each other.
 */
export async function startCluster(options: { tls?: TlsFiles } = {}): Promise<ClusterTopology> {
  const processes: RedisServerProcess[] = [];
  const nodes: Server[] = [];
  const { tls } = options;
  try {
    for (let i = 0; i < 3; i += 1) {
      const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'];
      if (tls === undefined) {
        const process = await startRedisServer(undefined, args);
        processes.push(process);
        nodes.push({ host: '127.0.0.1', port: portOf(process) });
        continue;
      }
      // The cluster bus listens 10000 above the TLS port: both must be free.
      const port = await freeClusterPort();
      processes.push(await startRedisServer(undefined, [
        ...args, '--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-replication', 'yes',
        '--tls-cert-file', tls.cert, '--tls-key-file', tls.key, '--tls-ca-cert-file', tls.ca, '--tls-auth-clients', 'no',
      ]));
      nodes.push({ host: '127.0.0.1', port });
    }
    const cliTls = tls === undefined ? [] : ['--tls', '--cacert', tls.ca];
    await run('redis-cli', [...cliTls, '--cluster', 'create', ...nodes.map(({ host, port }) => `${host}:${port}`), '--cluster-replicas', '0', '--cluster-yes']);
    for (const node of nodes) {
      await until('every node seeing the cluster ok', async () => {
        const { stdout } = await run('redis-cli', [...cliTls, '-h', node.host, '-p', String(node.port), 'CLUSTER', 'INFO']);
        return /cluster_state:ok/.test(stdout);
      });
    }
    return {
      nodes,
      processes,
      close: async () => {
        for (const process of processes) await process.kill();
      },
    };
  } catch (error) {
    for (const process of processes) await process.kill();
    throw error;
  }
}

/** A port nothing listens on, below 55536, whose port 10000 above nothing listens on either. */
async function freeClusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 55_536 && await isFree(port + 10_000)) return port;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
