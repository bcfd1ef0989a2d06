import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/** A server named in REDIS_SENTINELS or REDIS_CLUSTER_NODES. */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
}

/** How Sentinel and Cluster nodes are logged in to, and whether over TLS (`tlsCa`: the authorities trusted, else the system's). */
interface NodeLogin {
  readonly username: string | null;
  readonly password: string | null;
  readonly tls: boolean;
  readonly tlsCa?: Buffer | undefined;
}

/**
 * Where Redis is: one server (`redis://` or `rediss://`, login in the URL), a primary that sentinels
 * name and follow through failovers, or a Cluster whose slots are learned from any of its nodes.
 */
export type RedisTarget =
  | { readonly kind: 'single'; readonly url: string; readonly tlsCa?: Buffer | undefined }
  | (NodeLogin & { readonly kind: 'sentinel'; readonly sentinels: readonly RedisServer[]; readonly name: string; readonly sentinelPassword: string | null })
  | (NodeLogin & { readonly kind: 'cluster'; readonly nodes: readonly RedisServer[] });

/** One Redis at a URL, as the tests and benches name it. */
export function redisAt(url: string, tlsCa?: Buffer): RedisTarget {
  return { kind: 'single', url, tlsCa };
}

/** The setting that names where Redis is, for messages. */
export function placeSetting(target: RedisTarget): string {
  if (target.kind === 'single') return 'REDIS_URL';
  return target.kind === 'sentinel' ? 'REDIS_SENTINELS' : 'REDIS_CLUSTER_NODES';
}

/** The user name and password the target logs in with; null without a password. */
export function loginOf(target: RedisTarget): { readonly username: string | null; readonly password: string } | null {
  if (target.kind !== 'single') return target.password === null ? null : { username: target.username, password: target.password };
  if (!URL.canParse(target.url)) return null;
  const { username, password } = new URL(target.url);
  return password === '' ? null : { username: username === '' ? null : decodeURIComponent(username), password: decodeURIComponent(password) };
}

/** Where the target points, for messages: hosts and ports, never a password. */
export function describeTarget(target: RedisTarget): string {
  if (target.kind === 'single') return `Redis at ${redisServer(target.url)}`;
  if (target.kind === 'sentinel') return `the primary "${target.name}" of the sentinels at ${serverList(target.sentinels)}`;
  return `the Redis Cluster at ${serverList(target.nodes)}`;
}

function serverList(servers: readonly RedisServer[]): string {
  return servers.map(({ host, port }) => (isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`)).join(', ');
}

/** Where a `redis://` URL points, for messages: host and port, never a password. */
function redisServer(url: string): string {
  if (!URL.canParse(url)) return 'the server REDIS_URL names';
  const { hostname, port } = new URL(url);
  return `${hostname}:${port === '' ? '6379' : port}`;
}

/**
 * The TLS options for a Redis URL: none for `redis://`; for `rediss://`, the server's certificate
 * verified against `ca` (the system's authorities without one) and its name against the URL's host.
 */
function redisTls(url: string, ca: Buffer | undefined): ConnectionOptions | undefined {
  const parsed = new URL(url);
  if (parsed.protocol !== 'rediss:') return undefined;
  return verifiedTls(parsed.hostname.replace(/^\[|\]$/g, ''), ca);
}

/**
 * TLS that verifies the server's certificate against `ca` (the system's authorities without one).
 * The name is checked against `host` always; a name is also sent to select the certificate (SNI),
 * which an IP address may not be.
 */
function verifiedTls(host: string | undefined, ca: Buffer | undefined): ConnectionOptions {
  return { ...(ca === undefined ? {} : { ca }), ...(host !== undefined && isIP(host) === 0 ? { servername: host } : {}), rejectUnauthorized: true };
}

/** What every client of the target is given besides where Redis is and how to log in. */
export type ClientTuning = Pick<RedisOptions, 'connectTimeout' | 'commandTimeout' | 'maxRetriesPerRequest' | 'enableOfflineQueue' | 'retryStrategy' | 'enableAutoPipelining'>;

/**
 * An ioredis client of the target: a `Redis` for one server or a Sentinel primary (which it asks
 * the sentinels for, and follows when they switch it, as soon as they say so), a `Cluster` for a
 * Cluster (slots learned, MOVED and ASK followed, one pipeline per node a turn).
 */
export function ioredisClient(target: RedisTarget, tuning: ClientTuning): Redis | Cluster {
  const client = newIoredisClient(target, tuning);
  keepSocketErrorsHandled(client);
  return client;
}

/**
 * ioredis takes a connection's first error with a `once` listener: a second one on the same socket
 * (a TLS peer's alert after its certificate was refused, say) would be thrown as unhandled and end
 * the process. At each error, the sockets in use get a listener of their own; the first error
 * has told all there is to tell.
 */
function keepSocketErrorsHandled(client: Redis | Cluster): void {
  const handled = new WeakSet<object>();
  const guard = (redis: Redis): void => {
    const socket = (redis as { stream?: { on(event: 'error', listener: () => void): unknown } }).stream;
    if (socket === undefined || handled.has(socket)) return;
    handled.add(socket);
    socket.on('error', () => undefined);
  };
  if (client instanceof Cluster) client.on('node error', () => client.nodes('all').forEach(guard));
  else client.on('error', () => guard(client));
}

function newIoredisClient(target: RedisTarget, tuning: ClientTuning): Redis | Cluster {
  if (target.kind === 'single') {
    const tls = redisTls(target.url, target.tlsCa);
    return new Redis(target.url, { ...tuning, ...(tls === undefined ? {} : { tls }) });
  }
  const login = {
    ...(target.username === null ? {} : { username: target.username }),
    ...(target.password === null ? {} : { password: target.password }),
  };
  if (target.kind === 'sentinel') {
    // Each data node's name is its own: the sentinels report addresses, so the certificate's name
    // is checked against the address they name (ioredis sets the host for each connection).
    const tls = target.tls ? verifiedTls(undefined, target.tlsCa) : undefined;
    return new Redis({
      ...tuning,
      ...login,
      sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
      name: target.name,
      ...(target.sentinelPassword === null ? {} : { sentinelPassword: target.sentinelPassword }),
      ...(tls === undefined ? {} : { tls, sentinelTLS: tls, enableTLSForSentinelMode: true }),
      // Told of a switch by the sentinels' +switch-master, not by a hung old primary's timeouts.
      failoverDetector: true,
      // A sentinel that hangs is passed over for the next, as one that refuses is.
      ...(tuning.connectTimeout === undefined ? {} : { sentinelCommandTimeout: tuning.connectTimeout }),
    });
  }
  const tls = target.tls ? verifiedTls(undefined, target.tlsCa) : undefined;
  const { enableOfflineQueue, retryStrategy, ...nodeTuning } = tuning;
  const options: ClusterOptions = {
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(typeof retryStrategy === 'function' ? { clusterRetryStrategy: (attempt: number) => retryStrategy(attempt) } : {}),
    ...(tuning.enableAutoPipelining === undefined ? {} : { enableAutoPipelining: tuning.enableAutoPipelining }),
    redisOptions: { ...nodeTuning, ...login, ...(tls === undefined ? {} : { tls }) },
    slotsRefreshTimeout: tuning.connectTimeout ?? 1_000,
  };
  return new Cluster(target.nodes.map(({ host, port }) => ({ host, port })), options);
}
