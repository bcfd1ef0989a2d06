import { parseAddressBlock } from '../../domain/address-block.js';
import { ConfigError, flag, httpUrl, integer, oneOf, text, type Env } from './setting-values.js';
import type { StorageKind } from './storage-config.js';

export type Role = 'all' | 'api' | 'portal';
const ROLES: readonly Role[] = ['all', 'api', 'portal'];

/** Which listeners this process runs, where each listens, and whom they let in. */
export interface ListenerSettings {
  /**
   * Which listeners this process runs: `all` (the API and the portal), `api` (no portal), or
   * `portal` (the portal alone, beside API processes on the same MySQL storage).
   */
  readonly role: Role;
  readonly api: ApiListenerSettings;
  readonly portal: PortalListenerSettings;
  /** Where `/metrics` listens, on a listener of its own; port 0 turns metrics off. */
  readonly metrics: { readonly port: number; readonly host: string };
  /** Addresses and CIDR blocks of the proxies whose X-Forwarded-For names the client. */
  readonly trustedProxies: readonly string[];
  /**
   * After SIGTERM or SIGINT, how long the listeners keep serving while `/readyz` answers 503
   * (SHUTDOWN_DRAIN_MS), so load balancers stop sending here before anything is refused.
   */
  readonly shutdownDrainMs: number;
}

export interface ApiListenerSettings {
  readonly port: number;
  readonly host: string;
  /** The API's address as partners reach it (the OpenAPI document's server, HSTS when https); null means `http://HOST:PORT`. */
  readonly publicBaseUrl: string | null;
  /** Open connections at most, all clients together. */
  readonly maxConnections: number;
  /** Open connections at most from one address (trusted proxies excepted). */
  readonly maxConnectionsPerAddress: number;
}

/** Where the partner portal listens, on a listener of its own; port 0 turns the portal off. */
export interface PortalListenerSettings {
  readonly port: number;
  readonly host: string;
  /** The portal's address as admins reach it, for invitation links; null means `http://PORTAL_HOST:PORTAL_PORT`. */
  readonly publicUrl: string | null;
  /** Marks the session cookie `Secure`: set it when admins reach the portal over TLS (a proxy in front). */
  readonly secureCookies: boolean;
}

/** The listeners' settings; a portal alone (ROLE=portal) needs the MySQL storage it shares with the API processes. */
export function listenerSettings(env: Env, storage: StorageKind): ListenerSettings {
  const role = oneOf(env, 'ROLE', ROLES, 'all');
  const portal = portalListener(env, role, storage);
  return {
    role,
    api: {
      port: integer(env, 'PORT', 3000, 0, 65_535),
      host: text(env, 'HOST') ?? '127.0.0.1',
      publicBaseUrl: httpUrl(env, 'PUBLIC_BASE_URL'),
      maxConnections: integer(env, 'MAX_CONNECTIONS', 4_096, 1, 1_000_000),
      // A partner's key allows 100 requests a minute: a few connections carry that many times over.
      maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', 32, 1, 1_000_000),
    },
    portal,
    metrics: { port: integer(env, 'METRICS_PORT', 9464, 0, 65_535), host: text(env, 'METRICS_HOST') ?? '127.0.0.1' },
    trustedProxies: addressList(env, 'TRUSTED_PROXIES'),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', DEFAULT_SHUTDOWN_DRAIN_MS, 0, 600_000),
  };
}

/** SHUTDOWN_DRAIN_MS's default: a readiness probe every 2 s that fails once takes an instance out within it. */
export const DEFAULT_SHUTDOWN_DRAIN_MS = 5_000;

/** The portal's listener: off (port 0) with ROLE=api, and required with ROLE=portal. */
function portalListener(env: Env, role: Role, storage: StorageKind): PortalListenerSettings {
  const port = integer(env, 'PORTAL_PORT', 3001, 0, 65_535);
  if (role === 'portal' && storage !== 'mysql') {
    throw new ConfigError('ROLE', 'portal needs STORAGE=mysql: a portal in a process of its own shares keys with the API processes through the database');
  }
  if (role === 'portal' && port === 0) throw new ConfigError('ROLE', 'portal needs a PORTAL_PORT other than 0');
  return {
    port: role === 'api' ? 0 : port,
    host: text(env, 'PORTAL_HOST') ?? '127.0.0.1',
    publicUrl: httpUrl(env, 'PORTAL_PUBLIC_URL'),
    secureCookies: flag(env, 'PORTAL_SECURE_COOKIES'),
  };
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
