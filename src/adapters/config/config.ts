import { DEFAULT_RETRY_SCHEDULE_SECONDS, parseRetrySchedule } from '../../domain/webhook-retries.js';
import { existsSync } from 'node:fs';
import { parseAddressBlock } from '../../domain/address-block.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../domain/rate-limit.js';

/** The service's settings (docs/decisions.md, configuration), validated. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** The API's address as partners reach it (the OpenAPI document's server, HSTS when https); null means `http://HOST:PORT`. */
  readonly publicBaseUrl: string | null;
  readonly storage: 'memory' | 'mysql';
  /** Null means the bundled demo catalog. */
  readonly catalogFile: string | null;
  readonly databaseUrl: string | null;
  /** Connections the serving pool opens to the database at most (DATABASE_POOL_SIZE). */
  readonly databasePoolSize: number;
  /** TLS to the database (DATABASE_TLS), and the PEM file of the authorities it trusts (DATABASE_TLS_CA_FILE; null: the system's). */
  readonly databaseTls: { readonly enabled: boolean; readonly caFile: string | null };
  /**
   * Read replicas (DATABASE_REPLICA_URLS; none: every read goes to DATABASE_URL), and how long a read
   * may wait for one to apply a change before it goes to the primary (DATABASE_REPLICA_WAIT_MS).
   */
  readonly databaseReplicas: { readonly urls: readonly string[]; readonly waitMs: number };
  readonly rateLimitStore: 'memory' | 'redis';
  /** Where Redis is and how to log in, from REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES; null without any. */
  readonly redis: RedisSettings | null;
  readonly rateLimitPerMinute: number;
  readonly cacheTtlMs: number;
  /** Most keys the in-process rate limiter tracks at once (memory stays bounded whatever the traffic). */
  readonly rateLimitMaxKeys: number;
  /** Most lookup answers the in-process response cache holds at once. */
  readonly cacheMaxEntries: number;
  /** Most bytes the response cache's answers may take, as it counts them; with cacheMaxEntries, the first reached evicts. */
  readonly cacheMaxBytes: number;
  readonly logLevel: LogLevel;
  /** Open connections at most, all clients together. */
  readonly maxConnections: number;
  /** Open connections at most from one address (trusted proxies excepted). */
  readonly maxConnectionsPerAddress: number;
  /** Failed authentications one client address may have per minute before it is held back. */
  readonly authFailuresPerMinute: number;
  /** Addresses and CIDR blocks of the proxies whose X-Forwarded-For names the client. */
  readonly trustedProxies: readonly string[];
  /** Where the partner portal listens, on a listener of its own; port 0 turns the portal off. */
  readonly portalPort: number;
  readonly portalHost: string;
  /** The portal's address as admins reach it, for invitation links; null means `http://PORTAL_HOST:PORTAL_PORT`. */
  readonly portalPublicUrl: string | null;
  /** Marks the session cookie `Secure`: set it when admins reach the portal over TLS (a proxy in front). */
  readonly portalSecureCookies: boolean;
  /**
   * Which listeners this process runs: `all` (the API and the portal), `api` (no portal), or
   * `portal` (the portal alone, beside API processes on the same MySQL storage).
   */
  readonly role: Role;
  /** Where `/metrics` listens, on a listener of its own; port 0 turns metrics off. */
  readonly metricsPort: number;
  readonly metricsHost: string;
  /** Signs changes-feed cursors; null means a secret the storage keeps (MySQL) or makes at start (memory). */
  readonly cursorSecret: string | null;
  /** Webhook endpoints may be `http` and name loopback, private and other non-public addresses: development and tests only. */
  readonly webhookAllowPrivateTargets: boolean;
  /** How long one webhook attempt may take, from resolving the name to the answer's head. */
  readonly webhookTimeoutMs: number;
  /** Webhook attempts in flight at once in this instance. */
  readonly webhookConcurrency: number;
  /** The waits between a message's attempts, in seconds. */
  readonly webhookRetrySchedule: readonly number[];
  /** How often each instance looks for webhook deliveries that are due. */
  readonly webhookPollMs: number;
  /** Whom partners contact about the API: the OpenAPI document's `info.contact`. */
  readonly openapiContact: { readonly name: string; readonly email: string | null; readonly url: string | null };
  /** The partner agreement's address: the document's licence and terms; null points them at the docs page. */
  readonly openapiTermsUrl: string | null;
}

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

export type Role = 'all' | 'api' | 'portal';
const ROLES: readonly Role[] = ['all', 'api', 'portal'];

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** A bad setting; its message is the one line an operator sees, naming the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** Loads `.env` from the working directory (never overriding the real environment). */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

const MIB = 1_048_576;

export function readConfig(env: Env): Config {
  const storage = oneOf(env, 'STORAGE', ['memory', 'mysql'] as const, 'memory');
  const rateLimitStore = oneOf(env, 'RATE_LIMIT_STORE', ['memory', 'redis'] as const, 'memory');
  const role = oneOf(env, 'ROLE', ROLES, 'all');
  const portalPort = integer(env, 'PORTAL_PORT', 3001, 0, 65_535);
  if (role === 'portal' && storage !== 'mysql') {
    throw new ConfigError('ROLE', 'portal needs STORAGE=mysql: a portal in a process of its own shares keys with the API processes through the database');
  }
  if (role === 'portal' && portalPort === 0) throw new ConfigError('ROLE', 'portal needs a PORTAL_PORT other than 0');
  return {
    port: integer(env, 'PORT', 3000, 0, 65_535),
    host: text(env, 'HOST') ?? '127.0.0.1',
    publicBaseUrl: httpUrl(env, 'PUBLIC_BASE_URL'),
    storage,
    catalogFile: text(env, 'CATALOG_FILE'),
    databaseUrl: storage === 'mysql' ? requiredUrl(env, 'DATABASE_URL', 'mysql:', 'STORAGE=mysql') : optionalUrl(env, 'DATABASE_URL', 'mysql:'),
    // 10 served cold lookups best on a 2-core host (docs/performance.md); MariaDB's default
    // max_connections is 151, which a handful of instances at the largest size still fit under.
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 100),
    databaseTls: databaseTls(env),
    databaseReplicas: databaseReplicas(env, storage, rateLimitStore),
    rateLimitStore,
    redis: redisSettings(env, rateLimitStore),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', DEFAULT_RATE_LIMIT_PER_MINUTE, 1, 1_000_000_000),
    cacheTtlMs: integer(env, 'CACHE_TTL_MS', 30_000, 0, 86_400_000),
    rateLimitMaxKeys: integer(env, 'RATE_LIMIT_MAX_KEYS', 100_000, 1, 100_000_000),
    cacheMaxEntries: integer(env, 'CACHE_MAX_ENTRIES', 200_000, 1, 100_000_000),
    // 512 MiB holds every answer a 30 s TTL keeps alive at 3,000 Zipf lookups a second (docs/decisions.md).
    // Half of what is counted lives on V8's heap, whose default limit is about 4 GB: 4 GiB at most.
    cacheMaxBytes: integer(env, 'CACHE_MAX_BYTES', 512 * MIB, MIB, 4_096 * MIB),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 4_096, 1, 1_000_000),
    // A partner's key allows 100 requests a minute: a few connections carry that many times over.
    maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', 32, 1, 1_000_000),
    authFailuresPerMinute: integer(env, 'AUTH_FAILURES_PER_MINUTE', 30, 1, 1_000_000_000),
    trustedProxies: addressList(env, 'TRUSTED_PROXIES'),
    portalPort: role === 'api' ? 0 : portalPort,
    portalHost: text(env, 'PORTAL_HOST') ?? '127.0.0.1',
    portalPublicUrl: httpUrl(env, 'PORTAL_PUBLIC_URL'),
    portalSecureCookies: oneOf(env, 'PORTAL_SECURE_COOKIES', ['true', 'false'] as const, 'false') === 'true',
    role,
    metricsPort: integer(env, 'METRICS_PORT', 9464, 0, 65_535),
    metricsHost: text(env, 'METRICS_HOST') ?? '127.0.0.1',
    cursorSecret: secret(env, 'CURSOR_SECRET', MIN_SECRET_LENGTH),
    webhookAllowPrivateTargets: oneOf(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', ['true', 'false'] as const, 'false') === 'true',
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 1_000, 120_000),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 16, 1, 256),
    webhookRetrySchedule: retrySchedule(env),
    webhookPollMs: integer(env, 'WEBHOOK_POLL_MS', 500, 100, 60_000),
    openapiContact: {
      name: displayName(env, 'OPENAPI_CONTACT_NAME') ?? 'API support',
      email: emailAddress(env, 'OPENAPI_CONTACT_EMAIL'),
      url: httpUrl(env, 'OPENAPI_CONTACT_URL'),
    },
    openapiTermsUrl: httpUrl(env, 'OPENAPI_TERMS_URL'),
  };
}

/** The variable's value, or null when unset or blank. */
function text(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? null : value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = text(env, name);
  if (value === null) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(name, `must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
}

function retrySchedule(env: Env): readonly number[] {
  const value = text(env, 'WEBHOOK_RETRY_SCHEDULE');
  if (value === null) return DEFAULT_RETRY_SCHEDULE_SECONDS;
  const schedule = parseRetrySchedule(value);
  if ('problem' in schedule) throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', `must be seconds separated by commas: ${schedule.problem}`);
  return schedule;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === null) return fallback;
  const n = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Comma-separated IP addresses or CIDR blocks; empty when unset. */
function addressList(env: Env, name: string): readonly string[] {
  const entries = (text(env, name) ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    if (parseAddressBlock(entry) === null) {
      throw new ConfigError(name, `must be IP addresses or CIDR blocks separated by commas; got ${JSON.stringify(entry)}`);
    }
  }
  return entries;
}

/** An absolute http(s) URL without a trailing slash; null when unset. */
function httpUrl(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (!URL.canParse(value) || !['http:', 'https:'].includes(new URL(value).protocol)) {
    throw new ConfigError(name, `must be an absolute http:// or https:// URL; got ${JSON.stringify(value)}`);
  }
  return value.replace(/\/+$/, '');
}

/** A name shown to people: at most 100 characters, none of them a control character; null when unset. */
function displayName(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (value.length > 100 || /\p{Cc}/u.test(value)) throw new ConfigError(name, `must be at most 100 characters, without control characters; got ${JSON.stringify(value)}`);
  return value;
}

/** An e-mail address (`name@domain.tld`, no spaces or angle brackets); null when unset. */
function emailAddress(env: Env, name: string): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (value.length > 254 || !/^[^\s@<>()",;]+@[^\s@<>()",;]+\.[^\s@<>()",;.]+$/.test(value)) {
    throw new ConfigError(name, `must be an e-mail address such as api-support@example.com; got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Characters at least of a secret setting: a random one of 32 characters or more cannot be guessed. */
const MIN_SECRET_LENGTH = 32;

/** A secret, never echoed; null when unset. */
function secret(env: Env, name: string, minLength: number): string | null {
  const value = text(env, name);
  if (value === null) return null;
  if (value.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters (openssl rand -base64 48 makes one)`);
  return value;
}

/** What each kind of connection URL looks like, for the message that refuses one. */
const URL_SHAPES: Readonly<Record<string, string>> = {
  'mysql:': 'mysql://user:password@host:3306/database',
  'redis:': 'redis://host:6379 (redis://:password@host:6379 with a password, rediss:// for TLS)',
};

/** REDIS_URL: plain, or TLS (`rediss://`). */
const REDIS_PROTOCOLS = ['redis:', 'rediss:'] as const;

/**
 * The parts of a connection URL its driver decodes (decodeURIComponent), as an operator calls them.
 * The URL parser lets a `%` that starts no escape through, and the decode would then stop the start
 * or the command with "URI malformed", naming no setting.
 */
const DECODED_PARTS = [['username', 'user name'], ['password', 'password'], ['hostname', 'host'], ['pathname', 'path']] as const;

/** A `%` not followed by two hexadecimal digits. */
const LONE_PERCENT = /%(?![0-9A-Fa-f]{2})/;

function optionalUrl(env: Env, name: string, protocols: string | readonly string[]): string | null {
  const value = text(env, name);
  if (value === null) return null;
  const allowed = typeof protocols === 'string' ? [protocols] : protocols;
  const protocol = allowed[0]!;
  if (!URL.canParse(value) || !allowed.includes(new URL(value).protocol)) {
    // Never echo the value: a connection URL may hold a password.
    throw new ConfigError(name, `must be a ${protocol}// URL, as ${URL_SHAPES[protocol] ?? `${protocol}//host`}`);
  }
  const url = new URL(value);
  for (const [part, called] of DECODED_PARTS) {
    const problem = escapeProblem(url[part]);
    // Which part, never what it holds: the password's neighbours would give it away.
    if (problem !== null) throw new ConfigError(name, `the ${called} ${problem}`);
  }
  return value;
}

/** What is wrong with a part's percent-escapes, as the rest of a message; null when it decodes. */
function escapeProblem(part: string): string | null {
  if (LONE_PERCENT.test(part)) return 'holds a % not followed by two hexadecimal digits: write a literal % as %25';
  try {
    decodeURIComponent(part);
    return null;
  } catch {
    return 'holds percent-escapes that do not decode to UTF-8 text (such as %ff alone): encode it as encodeURIComponent does, a literal % as %25';
  }
}

/**
 * DATABASE_TLS and the authorities it trusts. A CA file without TLS is refused rather than left
 * unread: an operator who named one expects the connections to be verified against it.
 */
function databaseTls(env: Env): Config['databaseTls'] {
  const enabled = oneOf(env, 'DATABASE_TLS', ['true', 'false'] as const, 'false') === 'true';
  const caFile = text(env, 'DATABASE_TLS_CA_FILE');
  if (caFile !== null && !enabled) throw new ConfigError('DATABASE_TLS_CA_FILE', 'names the authorities TLS trusts, and TLS is off: set DATABASE_TLS=true, or remove DATABASE_TLS_CA_FILE');
  return { enabled, caFile };
}

/** The most replicas one instance reads: each has a pool of DATABASE_POOL_SIZE connections. */
const MAX_REPLICAS = 16;

/**
 * DATABASE_REPLICA_URLS and DATABASE_REPLICA_WAIT_MS. An instance learns what a replica must have
 * applied from the changes announced through Redis, so replicas need Redis and the cache that
 * watches it; without them they are refused, never read blind. So is a replica named twice, or
 * named as the primary: a primary never catches up with itself, and every wait on it would time out.
 */
function databaseReplicas(env: Env, storage: Config['storage'], rateLimitStore: Config['rateLimitStore']): Config['databaseReplicas'] {
  const waitMs = integer(env, 'DATABASE_REPLICA_WAIT_MS', 1_000, 0, 60_000);
  const list = text(env, 'DATABASE_REPLICA_URLS');
  if (list === null) return { urls: [], waitMs };
  const name = 'DATABASE_REPLICA_URLS';
  if (storage !== 'mysql') throw new ConfigError(name, 'replicas are read with STORAGE=mysql only: set STORAGE=mysql, or remove DATABASE_REPLICA_URLS');
  if (rateLimitStore !== 'redis' || text(env, 'CACHE_TTL_MS') === '0') {
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
 * RATE_LIMIT_STORE=redis), with the settings that go with it. A setting that the chosen one would
 * not read is refused, rather than left unread: an operator who set it expects it to act.
 */
function redisSettings(env: Env, rateLimitStore: 'memory' | 'redis'): RedisSettings | null {
  const places = REDIS_PLACES.filter((name) => text(env, name) !== null);
  if (places.length > 1) throw new ConfigError(places[1]!, `cannot be set with ${places[0]}: set exactly one of ${REDIS_PLACES.join(', ')}`);
  const place = places[0];
  const tlsCaFile = text(env, 'REDIS_TLS_CA_FILE');
  if (place === undefined) {
    if (rateLimitStore === 'redis') throw new ConfigError('REDIS_URL', `is required with RATE_LIMIT_STORE=redis (or, for Sentinel or Cluster, REDIS_SENTINELS or REDIS_CLUSTER_NODES)`);
    const stray = ['REDIS_TLS_CA_FILE', ...Object.keys(NOT_WITH_URL)].find((name) => text(env, name) !== null);
    if (stray !== undefined) throw new ConfigError(stray, `is set, but no Redis is: set one of ${REDIS_PLACES.join(', ')}, or remove it`);
    return null;
  }
  if (place === 'REDIS_URL') {
    const stray = Object.keys(NOT_WITH_URL).find((name) => text(env, name) !== null);
    if (stray !== undefined) throw new ConfigError(stray, `is not read with REDIS_URL: ${NOT_WITH_URL[stray]!}`);
    const url = requiredUrl(env, 'REDIS_URL', REDIS_PROTOCOLS, 'RATE_LIMIT_STORE=redis');
    if (tlsCaFile !== null && new URL(url).protocol !== 'rediss:') {
      throw new ConfigError('REDIS_TLS_CA_FILE', 'names the authorities TLS trusts, and REDIS_URL does not use TLS: write it as rediss://, or remove REDIS_TLS_CA_FILE');
    }
    return { kind: 'single', url, tlsCaFile };
  }
  const tls = oneOf(env, 'REDIS_TLS', ['true', 'false'] as const, 'false') === 'true';
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

function requiredUrl(env: Env, name: string, protocols: string | readonly string[], because: string): string {
  const value = optionalUrl(env, name, protocols);
  if (value === null) throw new ConfigError(name, `is required with ${because}`);
  return value;
}
