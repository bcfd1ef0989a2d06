import type Koa from 'koa';
import type { Logger } from 'pino';
import { trustedProxies, type TrustedProxies } from '../listening/client-address.js';
import { PORTAL_SHARE, type ListenerShare } from '../listening/descriptor-budget.js';
import { startGuardedServer, textAnswers } from '../listening/guarded-server.js';
import { hostRule } from '../listening/host-names.js';
import { PORTAL_SETTINGS } from '../listening/listen-failure.js';

export interface RunningPortal {
  readonly url: string;
  close(graceMs?: number): Promise<void>;
}

/** A browser opens a handful of connections to a site; an address holding more is not a browser. */
export const PORTAL_CONNECTIONS_PER_ADDRESS = 16;
const CLOSE_GRACE_MS = 5_000;

export interface PortalServerOptions {
  readonly port: number;
  readonly host: string;
  /** The portal's part of the process's descriptors (default: its part when the limit is unknown). */
  readonly share?: ListenerShare;
  /** Proxies whose connections are not bounded per address (default none). */
  readonly trustedProxies?: TrustedProxies;
  /** The name admins reach the portal by (PORTAL_PUBLIC_URL), which it answers besides its own (default none). */
  readonly publicUrl?: string | null;
  readonly logger?: Logger;
}

/** Serves the portal on its own listener, apart from the API, under the same listener policy. */
export async function startPortalServer(app: Koa, options: PortalServerOptions): Promise<RunningPortal> {
  const handle = app.callback();
  const share = options.share ?? PORTAL_SHARE;
  const running = await startGuardedServer((req, res) => void handle(req, res), {
    port: options.port,
    host: options.host,
    policy: {
      limits: {
        maxConnections: share.connections,
        maxConnectionsPerAddress: PORTAL_CONNECTIONS_PER_ADDRESS,
        maxHeldRefusals: share.heldRefusals,
        trustedProxies: options.trustedProxies ?? trustedProxies([]),
      },
      format: textAnswers,
      allow: 'GET, HEAD, POST',
      acceptsHost: hostRule(options.host, options.publicUrl ?? null),
      settings: PORTAL_SETTINGS,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
  });
  return { url: running.url, close: (graceMs = CLOSE_GRACE_MS) => running.close(graceMs) };
}
