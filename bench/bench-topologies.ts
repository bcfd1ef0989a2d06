import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ask, startCluster, startSentinelTopology, type Server } from '../test/support/redis-topologies.js';
import { pinned } from './server-process.js';

const run = promisify(execFile);

/** The production row on Sentinel and on Cluster: the service's environment for each, and how to stop its servers. */
export interface BenchTopology {
  readonly name: 'Sentinel' | 'Cluster';
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

/**
 * A primary, a replica and three sentinels; and a Cluster of three primaries: each started on
 * loopback, and, when the bench pins, moved to the load generator's core as the single Redis of the
 * production row is (in production Redis runs on hosts of its own). Empty, with a line saying why,
 * when they cannot be started.
 */
export async function openBenchTopologies(): Promise<BenchTopology[]> {
  try {
    const sentinel = await startSentinelTopology();
    const cluster = await startCluster();
    const servers = [...sentinel.sentinels, ...[...sentinel.servers.keys()].map((port) => ({ host: '127.0.0.1', port })), ...cluster.nodes];
    if (pinned) await Promise.all(servers.map(onLoadCore));
    const list = (nodes: readonly Server[]): string => nodes.map(({ host, port }) => `${host}:${port}`).join(',');
    return [
      { name: 'Sentinel', env: { RATE_LIMIT_STORE: 'redis', REDIS_SENTINELS: list(sentinel.sentinels), REDIS_SENTINEL_NAME: sentinel.name }, cleanup: () => sentinel.close() },
      { name: 'Cluster', env: { RATE_LIMIT_STORE: 'redis', REDIS_CLUSTER_NODES: list(cluster.nodes) }, cleanup: () => cluster.close() },
    ];
  } catch (error) {
    process.stdout.write(`bench: Sentinel and Cluster not started (${(error as Error).message}); no rows for them\n`);
    return [];
  }
}

/** Moves a running redis-server (its pid from INFO server) to the load generator's core. */
async function onLoadCore(server: Server): Promise<void> {
  const pid = /process_id:(\d+)/.exec(String(await ask(server, 'INFO', 'server')))?.[1];
  if (pid !== undefined) await run('taskset', ['-pc', '1', pid]);
}
