import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { TIMEOUTS } from '../timeouts.js';
import { trustedProxies } from '../listening/client-address.js';
import { METRICS_SHARE, type ListenerShare } from '../listening/descriptor-budget.js';
import { startGuardedServer, textAnswers } from '../listening/guarded-server.js';
import { hostRule } from '../listening/host-names.js';
import { METRICS_SETTINGS } from '../listening/listen-failure.js';

/** What `/metrics` serves. */
export interface MetricsSource {
  readonly contentType: string;
  exposition(): Promise<string>;
}

export interface RunningMetricsServer {
  /** `http://host:port/metrics`, with the port actually bound. */
  readonly url: string;
  /** Stops accepting, lets a scrape in flight finish (at most `graceMs`), then resolves. */
  close(graceMs?: number): Promise<void>;
}

const METRICS_PATH = '/metrics';
/** The metrics listener's one path takes a scrape, nothing else. */
const ALLOWED_METHODS = 'GET, HEAD';
/** A scraper or two per address. */
const METRICS_CONNECTIONS_PER_ADDRESS = 4;

export interface MetricsServerOptions {
  readonly port: number;
  readonly host: string;
  /** The listener's part of the process's descriptors (default: its part when the limit is unknown). */
  readonly share?: ListenerShare;
  readonly logger?: Logger;
}

/**
 * `GET /metrics` on a listener of its own, apart from the API: it needs no key, is never counted
 * by the API's limits, and by default listens on loopback only, for a scraper on the same host
 * or behind the operator's own network rules.
 */
export async function startMetricsServer(source: MetricsSource, options: MetricsServerOptions): Promise<RunningMetricsServer> {
  const running = await startGuardedServer((req, res) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    if ((query === -1 ? url : url.slice(0, query)) !== METRICS_PATH) {
      answer(res, 404, 'text/plain; charset=utf-8', `Not found: the figures are at ${METRICS_PATH}.\n`);
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', ALLOWED_METHODS);
      answer(res, 405, 'text/plain; charset=utf-8', 'Use GET or HEAD.\n');
    } else {
      source.exposition().then(
        // node:http sends no body to HEAD, with the length of the one GET would have.
        (text) => answer(res, 200, source.contentType, text),
        () => answer(res, 500, 'text/plain; charset=utf-8', 'The figures could not be gathered.\n'),
      );
    }
  }, {
    port: options.port,
    host: options.host,
    policy: {
      limits: {
        maxConnections: (options.share ?? METRICS_SHARE).connections,
        maxConnectionsPerAddress: METRICS_CONNECTIONS_PER_ADDRESS,
        maxHeldRefusals: (options.share ?? METRICS_SHARE).heldRefusals,
        trustedProxies: trustedProxies([]),
      },
      format: textAnswers,
      allow: ALLOWED_METHODS,
      acceptsHost: hostRule(options.host, null),
      settings: METRICS_SETTINGS,
      // A scrape sends no body.
      maxBodyBytes: 0,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
  });
  return { url: `${running.url}${METRICS_PATH}`, close: (graceMs = TIMEOUTS.shutdownGraceMs) => running.close(graceMs) };
}

function answer(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) }).end(body);
}
