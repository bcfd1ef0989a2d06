import { readFileSync } from 'node:fs';

/** What one listener may hold: connections it serves, and refused ones it holds for their delayed answer. */
export interface ListenerShare {
  readonly connections: number;
  readonly heldRefusals: number;
}

/** How the process's file descriptors are shared out among its listeners, so no listener can take those another needs. */
export interface DescriptorBudget {
  /** The process's limit on open files, or null where it cannot be read (then the configured bounds stand). */
  readonly limit: number | null;
  /** Kept for everything that is not a listener's socket: database and Redis connections, files, standard streams. */
  readonly reserved: number;
  readonly api?: ListenerShare;
  readonly portal?: ListenerShare;
  readonly metrics?: ListenerShare;
}

/** Descriptors kept back from the listeners: the database pool, Redis, the catalog file and its watcher, logs, with room to spare. */
export const RESERVED_DESCRIPTORS = 256;
/** A scraper holds a connection or two. */
export const METRICS_SHARE: ListenerShare = { connections: 16, heldRefusals: 16 };
/** The portal serves a few admins: a sixteenth of what is left, between these bounds, and half that again for refusals. */
const PORTAL_CONNECTIONS = { min: 32, max: 512, unknownLimit: 256, fraction: 1 / 16 } as const;
/** The API's refusals held at once: a quarter of its share, at most this many. */
const API_MAX_HELD_REFUSALS = 1_024;
/** The portal's part where the limit on open files is unknown. */
export const PORTAL_SHARE: ListenerShare = withHalfHeld(PORTAL_CONNECTIONS.unknownLimit);
/** Below this many connections for the API, the start is refused: the limit on open files is too low to serve. */
const API_MIN_CONNECTIONS = 64;

/** The soft limit on open files of this process (Linux's /proc), or null where it cannot be read or is unlimited. */
export function openFileLimit(limitsFile = '/proc/self/limits'): number | null {
  try {
    const line = readFileSync(limitsFile, 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    return soft === undefined || !/^[0-9]+$/.test(soft) ? null : Number(soft);
  } catch {
    return null;
  }
}

/**
 * Shares `limit` descriptors out among the listeners that run. The metrics and portal listeners get
 * small fixed shares; the API gets the rest, at most `apiMaxConnections`. Throws when the limit
 * leaves the API too little to serve, naming what to raise.
 */
export function shareDescriptors(limit: number | null, listeners: { readonly apiMaxConnections?: number; readonly portal: boolean; readonly metrics: boolean }): DescriptorBudget {
  const { apiMaxConnections } = listeners;
  if (limit === null) {
    return {
      limit,
      reserved: RESERVED_DESCRIPTORS,
      ...(apiMaxConnections === undefined ? {} : { api: { connections: apiMaxConnections, heldRefusals: API_MAX_HELD_REFUSALS } }),
      ...(listeners.portal ? { portal: PORTAL_SHARE } : {}),
      ...(listeners.metrics ? { metrics: METRICS_SHARE } : {}),
    };
  }
  const usable = limit - RESERVED_DESCRIPTORS;
  const portal = listeners.portal ? portalShare(usable) : undefined;
  const metrics = listeners.metrics ? METRICS_SHARE : undefined;
  const rest = usable - total(portal) - total(metrics);
  const api = apiMaxConnections === undefined ? undefined : apiShare(rest, apiMaxConnections);
  if ((api !== undefined && api.connections < API_MIN_CONNECTIONS) || rest < 0) {
    throw new Error(`the process may open only ${limit} files, too few to serve beside its ${RESERVED_DESCRIPTORS} kept for storage and files (raise it: ulimit -n)`);
  }
  return { limit, reserved: RESERVED_DESCRIPTORS, ...(api ? { api } : {}), ...(portal ? { portal } : {}), ...(metrics ? { metrics } : {}) };
}

function portalShare(usable: number): ListenerShare {
  return withHalfHeld(Math.min(PORTAL_CONNECTIONS.max, Math.max(PORTAL_CONNECTIONS.min, Math.floor(usable * PORTAL_CONNECTIONS.fraction))));
}

function withHalfHeld(connections: number): ListenerShare {
  return { connections, heldRefusals: Math.floor(connections / 2) };
}

function apiShare(rest: number, maxConnections: number): ListenerShare {
  const heldRefusals = Math.min(API_MAX_HELD_REFUSALS, Math.floor(rest / 4));
  return { connections: Math.min(maxConnections, rest - heldRefusals), heldRefusals };
}

function total(share: ListenerShare | undefined): number {
  return share === undefined ? 0 : share.connections + share.heldRefusals;
}
