import { ConfigError, flag, requiredUrl, text, type Env } from './setting-values.js';

/** A server named in a list setting: `host:port`. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/**
 * One Redis (REDIS_URL, which carries the login and, as `rediss://`, TLS), a primary found through
 * sentinels, or a Cluster; the last two log in with REDIS_USERNAME and REDIS_PASSWORD, and use TLS
 * with REDIS_TLS. `tlsCaFile` names the authorities TLS trusts; null: the system's.
 */
export type RedisSettings =
  | { readonly kind: 'single'; readonly url: string; readonly tlsCaFile: string | null }
  | (RedisLogin & { readonly kind: 'sentinel'; readonly sentinels: readonly HostPort[]; readonly name: string; readonly sentinelPassword: string | null })
  | (RedisLogin & { readonly kind: 'cluster'; readonly nodes: readonly HostPort[] });

export interface RedisLogin {
  readonly username: string | null;
  readonly password: string | null;
  readonly tls: boolean;
  readonly tlsCaFile: string | null;
}

/** REDIS_URL: plain, or TLS (`rediss://`). */
const REDIS_PROTOCOLS = ['redis:', 'rediss:'] as const;
/** The settings that name where Redis is: exactly one may be set. */
const REDIS_PLACES = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const;
/** The settings that only Sentinel or Cluster read: with REDIS_URL the URL says all of it. */
const NOT_WITH_URL: Readonly<Record<string, string>> = {
  REDIS_USERNAME: 'write the user name in the URL, as redis://user:password@host:6379',
  REDIS_PASSWORD: 'write the password in the URL, as redis://:password@host:6379',
  REDIS_TLS: 'TLS to one Redis is the rediss:// scheme of REDIS_URL',
  REDIS_SENTINEL_NAME: 'it names the primary REDIS_SENTINELS watch',
  REDIS_SENTINEL_PASSWORD: 'it logs in to the sentinels REDIS_SENTINELS names',
};
const DEFAULT_SENTINEL_PORT = 26_379;
const DEFAULT_REDIS_PORT = 6_379;

/**
 * Where Redis is: one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES (required with
 * RATE_LIMIT_STORE=redis), with the settings that go with it; null without any. A setting that the
 * chosen one would not read is refused, rather than left unread: an operator who set it expects it to act.
 */
export function redisSettings(env: Env, rateLimitStore: 'memory' | 'redis'): RedisSettings | null {
  const places = REDIS_PLACES.filter((name) => text(env, name) !== null);
  if (places.length > 1) throw new ConfigError(places[1]!, `cannot be set with ${places[0]}: set exactly one of ${REDIS_PLACES.join(', ')}`);
  const place = places[0];
  if (place === undefined) return noRedis(env, rateLimitStore);
  if (place === 'REDIS_URL') return oneRedis(env);
  const tls = flag(env, 'REDIS_TLS');
  const tlsCaFile = text(env, 'REDIS_TLS_CA_FILE');
  if (tlsCaFile !== null && !tls) throw new ConfigError('REDIS_TLS_CA_FILE', 'names the authorities TLS trusts, and TLS is off: set REDIS_TLS=true, or remove REDIS_TLS_CA_FILE');
  const login = { username: text(env, 'REDIS_USERNAME'), password: rawText(env, 'REDIS_PASSWORD'), tls, tlsCaFile };
  if (login.username !== null && login.password === null) throw new ConfigError('REDIS_USERNAME', 'needs REDIS_PASSWORD: Redis logs a user in with both');
  if (place === 'REDIS_CLUSTER_NODES') {
    for (const name of ['REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_PASSWORD']) {
      if (text(env, name) !== null) throw new ConfigError(name, 'is not read with REDIS_CLUSTER_NODES: a Cluster has no sentinels');
    }
    return { ...login, kind: 'cluster', nodes: serverList(env, 'REDIS_CLUSTER_NODES', DEFAULT_REDIS_PORT) };
  }
  const name = text(env, 'REDIS_SENTINEL_NAME') ?? 'mymaster';
  return { ...login, kind: 'sentinel', sentinels: serverList(env, 'REDIS_SENTINELS', DEFAULT_SENTINEL_PORT), name, sentinelPassword: rawText(env, 'REDIS_SENTINEL_PASSWORD') };
}

/** No Redis named: refused when counting is in Redis, and so is any setting that goes with one. */
function noRedis(env: Env, rateLimitStore: 'memory' | 'redis'): null {
  if (rateLimitStore === 'redis') throw new ConfigError('REDIS_URL', `is required with RATE_LIMIT_STORE=redis (or, for Sentinel or Cluster, REDIS_SENTINELS or REDIS_CLUSTER_NODES)`);
  const stray = ['REDIS_TLS_CA_FILE', ...Object.keys(NOT_WITH_URL)].find((name) => text(env, name) !== null);
  if (stray !== undefined) throw new ConfigError(stray, `is set, but no Redis is: set one of ${REDIS_PLACES.join(', ')}, or remove it`);
  return null;
}

/** REDIS_URL, which says the login and TLS itself; REDIS_TLS_CA_FILE only with `rediss://`. */
function oneRedis(env: Env): RedisSettings {
  const stray = Object.keys(NOT_WITH_URL).find((name) => text(env, name) !== null);
  if (stray !== undefined) throw new ConfigError(stray, `is not read with REDIS_URL: ${NOT_WITH_URL[stray]!}`);
  const url = requiredUrl(env, 'REDIS_URL', REDIS_PROTOCOLS, 'RATE_LIMIT_STORE=redis');
  const tlsCaFile = text(env, 'REDIS_TLS_CA_FILE');
  if (tlsCaFile !== null && new URL(url).protocol !== 'rediss:') {
    throw new ConfigError('REDIS_TLS_CA_FILE', 'names the authorities TLS trusts, and REDIS_URL does not use TLS: write it as rediss://, or remove REDIS_TLS_CA_FILE');
  }
  return { kind: 'single', url, tlsCaFile };
}

/** A secret as set, spaces included (they may be part of it); null when unset or empty. */
function rawText(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value === '' ? null : value;
}

/** `host:port` or `host` (the default port then) servers separated by commas, IPv6 addresses in brackets; each once. */
function serverList(env: Env, name: string, defaultPort: number): readonly HostPort[] {
  const servers: HostPort[] = [];
  for (const entry of (text(env, name) ?? '').split(',').map((item) => item.trim())) {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/.exec(entry);
    const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
    if (match === null || port < 1 || port > 65_535) {
      throw new ConfigError(name, `must be servers as host:port separated by commas (IPv6 in brackets, as [::1]:${defaultPort}); got ${JSON.stringify(entry)}`);
    }
    const host = match[1]!.replace(/^\[|\]$/g, '');
    if (servers.some((server) => server.host === host && server.port === port)) throw new ConfigError(name, `names ${entry} twice`);
    servers.push({ host, port });
  }
  return servers;
}
