import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { TIMEOUTS } from '../timeouts.js';
import { countRequest, type RateLimitWindow } from '../../domain/rate-limit.js';
import { plainAddress, type TrustedProxies } from './client-address.js';
import { stopReading, type RequestHandler } from './listening.js';

export interface ConnectionLimits {
  /** Open connections at most, all clients together. */
  readonly maxConnections: number;
  /** Open connections at most from one peer address; a trusted proxy's are not limited. */
  readonly maxConnectionsPerAddress: number;
  readonly trustedProxies: TrustedProxies;
  /** Refused connections held for their delayed answer at once; past this, they are dropped unanswered (default 1,024). */
  readonly maxHeldRefusals?: number;
}

/**
 * Requests one connection may have in flight (received, answer not yet handed to the operating
 * system). A connection that pipelines deeper is closed at once, its answers not yet sent with it.
 * Node parses a whole read of pipelined requests at once (over a thousand small requests) and cannot
 * stop reading mid-way, so waiting for the answers in flight would keep all of them in memory, for
 * every such connection, while a client that never reads gains as much as one that does.
 */
export const MAX_IN_FLIGHT_PER_CONNECTION = 16;
/**
 * Connections from one address that may overflow that bound in a penalty window; after that the
 * address's new connections are refused before anything they send is parsed, for the rest of the
 * window. Parsing one read of a pipelined flood is what such a connection costs the server.
 */
export const OVERFLOWS_PER_PENALTY_WINDOW = 3;
export const PENALTY_WINDOW_MS = 60_000;
/** Addresses whose overflows are remembered at once; the least recently seen are forgotten first. */
const MAX_PENALIZED_ADDRESSES = 100_000;
const DEFAULT_MAX_HELD_REFUSALS = 1_024;
/** How often refusals are summed up in one log line, instead of a line each. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

const IN_FLIGHT = Symbol('requestsInFlight');
const IDLE_SINCE = Symbol('idleSince');
const REFUSED = Symbol('refused');
interface GuardedSocket extends Socket {
  [IN_FLIGHT]?: number;
  /** When its last answer closed (or it connected): the time it has been waiting for a request since. */
  [IDLE_SINCE]?: number;
  [REFUSED]?: true;
}

/**
 * An answer closed: one request fewer in flight on its connection, which is idle from now when none
 * is left. A closed answer no longer holds its socket; its request does.
 */
function answerClosed(this: ServerResponse): void {
  const socket = this.req.socket as GuardedSocket;
  const left = (socket[IN_FLIGHT] ?? 1) - 1;
  socket[IN_FLIGHT] = left;
  if (left === 0) socket[IDLE_SINCE] = Date.now();
}

/** Drops the socket once `TIMEOUTS.refusedConnectionLingerMs` have passed, whatever is still under way on it. */
function dropSoon(socket: Socket): void {
  setTimeout(() => socket.destroy(), TIMEOUTS.refusedConnectionLingerMs).unref();
}

/** How long a served connection has waited for its next request, in ms; null while a request is under way or for a refused one. */
export function idleFor(socket: Socket, now: number): number | null {
  const guarded = socket as GuardedSocket;
  if (guarded[REFUSED] === true || (guarded[IN_FLIGHT] ?? 0) > 0 || guarded[IDLE_SINCE] === undefined) return null;
  return now - guarded[IDLE_SINCE];
}

type Refusal = 'server_full' | 'address_full' | 'pipeline_overflow' | 'address_penalized';

/** What a refused socket is told: an HTTP status line, the error body and Retry-After seconds. */
export interface RefusalAnswer {
  readonly status: string;
  readonly body: { readonly error: 'too_many_connections' | 'too_many_pipelined_requests'; readonly message: string };
  readonly retryAfter: number;
}

/**
 * Applies the connection limits to `server` and returns `handle` guarded by the per-connection bound
 * on requests in flight. `refuse` writes the answer on a socket the server will not serve.
 */
export function guardConnections(
  server: Server,
  handle: RequestHandler,
  limits: ConnectionLimits,
  options: { refuse(socket: Socket, answer: RefusalAnswer): void; logger?: Logger | undefined; now?: () => number },
): RequestHandler {
  const now = options.now ?? Date.now;
  let open = 0;
  const perAddress = new Map<string, number>();
  const overflows = new LRUCache<string, RateLimitWindow>({ max: MAX_PENALIZED_ADDRESSES });
  const tally = new Map<Refusal, number>();
  const count = (refusal: Refusal): void => {
    tally.set(refusal, (tally.get(refusal) ?? 0) + 1);
  };
  const reporter = setInterval(() => {
    if (tally.size === 0) return;
    options.logger?.warn({ refused: Object.fromEntries(tally), intervalMs: REFUSAL_LOG_INTERVAL_MS }, 'connections refused');
    tally.clear();
  }, REFUSAL_LOG_INTERVAL_MS).unref();
  server.once('close', () => clearInterval(reporter));

  /** Seconds left of the address's penalty, or 0. */
  const penaltyOf = (address: string): number => {
    const window = overflows.get(address);
    const msLeft = window === undefined ? 0 : window.endsAt - now();
    return window !== undefined && window.count >= OVERFLOWS_PER_PENALTY_WINDOW && msLeft > 0 ? Math.ceil(msLeft / 1000) : 0;
  };

  server.on('connection', (socket: GuardedSocket) => {
    const address = plainAddress(socket.remoteAddress ?? '');
    const limited = !limits.trustedProxies.has(address);
    const penalty = limited ? penaltyOf(address) : 0;
    if (penalty > 0) {
      count('address_penalized');
      refuse(socket, {
        status: '429 Too Many Requests',
        body: {
          error: 'too_many_pipelined_requests',
          message: `Your address pipelined more than ${MAX_IN_FLIGHT_PER_CONNECTION} requests without reading the answers; its connections are refused for ${penalty} more seconds.`,
        },
        retryAfter: penalty,
      });
      return;
    }
    const fromAddress = (perAddress.get(address) ?? 0) + 1;
    const serverFull = open + 1 > limits.maxConnections;
    if (serverFull || (limited && fromAddress > limits.maxConnectionsPerAddress)) {
      count(serverFull ? 'server_full' : 'address_full');
      refuse(socket, {
        status: '503 Service Unavailable',
        body: {
          error: 'too_many_connections',
          message: serverFull
            ? 'The server has too many open connections; retry shortly.'
            : `Too many open connections from your address (at most ${limits.maxConnectionsPerAddress}); reuse or close some.`,
        },
        retryAfter: 1,
      });
      return;
    }
    open += 1;
    perAddress.set(address, fromAddress);
    socket[IDLE_SINCE] = Date.now();
    socket.once('close', () => {
      open -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });

  let held = 0;
  const maxHeld = limits.maxHeldRefusals ?? DEFAULT_MAX_HELD_REFUSALS;
  function refuse(socket: GuardedSocket, answer: RefusalAnswer): void {
    socket[REFUSED] = true;
    if (held >= maxHeld) {
      socket.destroy();
      return;
    }
    held += 1;
    stopReading(socket);
    setTimeout(() => {
      held -= 1;
      if (socket.destroyed) return;
      options.refuse(socket, answer);
      dropSoon(socket);
    }, TIMEOUTS.refusedConnectionDelayMs).unref();
  }

  function overflowed(socket: GuardedSocket): void {
    count('pipeline_overflow');
    const address = plainAddress(socket.remoteAddress ?? '');
    // What is left of the read is still parsed, into objects that die with the socket.
    socket.destroy();
    if (limits.trustedProxies.has(address)) return;
    const { window } = countRequest(overflows.get(address), now(), OVERFLOWS_PER_PENALTY_WINDOW, PENALTY_WINDOW_MS);
    overflows.set(address, window);
  }

  return (req, res) => {
    const socket = req.socket as GuardedSocket;
    if (socket[REFUSED] === true || socket.destroyed) return;
    const inFlight = (socket[IN_FLIGHT] ?? 0) + 1;
    if (inFlight > MAX_IN_FLIGHT_PER_CONNECTION) {
      overflowed(socket);
      return;
    }
    socket[IN_FLIGHT] = inFlight;
    // One function for every answer rather than a closure (and once's wrapper) per request.
    res.on('close', answerClosed);
    handle(req, res);
  };
}
