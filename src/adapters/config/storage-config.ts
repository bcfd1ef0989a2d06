import { ConfigError, flag, integer, MIN_SECRET_LENGTH, oneOf, optionalUrl, requiredUrl, secret, text, type Env } from './setting-values.js';

export type StorageKind = 'memory' | 'mysql';

/** Where the catalog and the keys are kept, and how the database is reached when it is MySQL. */
export interface StorageSettings {
  readonly kind: StorageKind;
  /** Null means the bundled demo catalog. */
  readonly catalogFile: string | null;
  /** Required with MySQL storage; read without it too, for the CLI. */
  readonly databaseUrl: string | null;
  /** Connections the serving pool opens to the database at most (DATABASE_POOL_SIZE). */
  readonly poolSize: number;
  /** TLS to the database (DATABASE_TLS), and the PEM file of the authorities it trusts (DATABASE_TLS_CA_FILE; null: the system's). */
  readonly tls: { readonly enabled: boolean; readonly caFile: string | null };
  /**
   * Read replicas (DATABASE_REPLICA_URLS; none: every read goes to DATABASE_URL), and how long a read
   * may wait for one to apply a change before it goes to the primary (DATABASE_REPLICA_WAIT_MS).
   */
  readonly replicas: { readonly urls: readonly string[]; readonly waitMs: number };
  /** Signs changes-feed cursors; null means a secret the storage keeps (MySQL) or makes at start (memory). */
  readonly cursorSecret: string | null;
}

/** The storage settings; replicas also need counting in Redis (RATE_LIMIT_STORE), which tells them what to wait for. */
export function storageSettings(env: Env, rateLimitStore: 'memory' | 'redis'): StorageSettings {
  const kind = oneOf(env, 'STORAGE', ['memory', 'mysql'] as const, 'memory');
  return {
    kind,
    catalogFile: text(env, 'CATALOG_FILE'),
    databaseUrl: kind === 'mysql' ? requiredUrl(env, 'DATABASE_URL', 'mysql:', 'STORAGE=mysql') : optionalUrl(env, 'DATABASE_URL', 'mysql:'),
    // 10 served cold lookups best on a 2-core host (docs/performance.md); MariaDB's default
    // max_connections is 151, which a handful of instances at the largest size still fit under.
    poolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 100),
    tls: databaseTls(env),
    replicas: databaseReplicas(env, kind, rateLimitStore),
    cursorSecret: secret(env, 'CURSOR_SECRET', MIN_SECRET_LENGTH),
  };
}

/**
 * DATABASE_TLS and the authorities it trusts. A CA file without TLS is refused rather than left
 * unread: an operator who named one expects the connections to be verified against it.
 */
function databaseTls(env: Env): StorageSettings['tls'] {
  const enabled = flag(env, 'DATABASE_TLS');
  const caFile = text(env, 'DATABASE_TLS_CA_FILE');
  if (caFile !== null && !enabled) throw new ConfigError('DATABASE_TLS_CA_FILE', 'names the authorities TLS trusts, and TLS is off: set DATABASE_TLS=true, or remove DATABASE_TLS_CA_FILE');
  return { enabled, caFile };
}

/** CACHE_TTL_MS, read here as the cache section reads it: a replica check that compared the text took `00` for a cache on. */
export function cacheTtlMs(env: Env): number {
  return integer(env, 'CACHE_TTL_MS', 30_000, 0, 86_400_000);
}

/** The most replicas one instance reads: each has a pool of DATABASE_POOL_SIZE connections. */
const MAX_REPLICAS = 16;

/**
 * DATABASE_REPLICA_URLS and DATABASE_REPLICA_WAIT_MS. An instance learns what a replica must have
 * applied from the changes announced through Redis, so replicas need Redis and the cache that
 * watches it; without them they are refused, never read blind. So is a replica named twice, or
 * named as the primary: a primary never catches up with itself, and every wait on it would time out.
 */
function databaseReplicas(env: Env, storage: StorageKind, rateLimitStore: 'memory' | 'redis'): StorageSettings['replicas'] {
  const waitMs = integer(env, 'DATABASE_REPLICA_WAIT_MS', 1_000, 0, 60_000);
  const list = text(env, 'DATABASE_REPLICA_URLS');
  if (list === null) return { urls: [], waitMs };
  const name = 'DATABASE_REPLICA_URLS';
  if (storage !== 'mysql') throw new ConfigError(name, 'replicas are read with STORAGE=mysql only: set STORAGE=mysql, or remove DATABASE_REPLICA_URLS');
  if (rateLimitStore !== 'redis' || cacheTtlMs(env) === 0) {
    throw new ConfigError(name, 'an instance learns what a replica must have applied from the changes announced through Redis: set RATE_LIMIT_STORE=redis with Redis settings and a CACHE_TTL_MS above 0, or remove DATABASE_REPLICA_URLS');
  }
  const entries = list.split(',').map((entry) => entry.trim());
  if (entries.length > MAX_REPLICAS) throw new ConfigError(name, `names ${entries.length} replicas; at most ${MAX_REPLICAS}`);
  const urls = entries.map((entry, index) => {
    const which = `replica ${index + 1} of ${entries.length}`;
    if (entry === '') throw new ConfigError(name, `${which} is empty: separate the URLs with single commas`);
    try {
      return optionalUrl({ [name]: entry }, name, 'mysql:')!;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      throw new ConfigError(name, `${which}: ${error.message.slice(name.length + 2)}`);
    }
  });
  const primary = text(env, 'DATABASE_URL');
  urls.forEach((url, index) => {
    const which = `replica ${index + 1} of ${urls.length}`;
    if (urls.indexOf(url) !== index) throw new ConfigError(name, `${which} repeats replica ${urls.indexOf(url) + 1}: name each replica once`);
    if (url === primary) throw new ConfigError(name, `${which} is DATABASE_URL, the primary: name only replicas here`);
  });
  return { urls, waitMs };
}
