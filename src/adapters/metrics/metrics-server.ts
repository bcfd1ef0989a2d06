import { createServer, type ServerResponse } from 'node:http';
import { TIMEOUTS } from '../../application/timeouts.js';
import { closeGracefully, listen } from '../listening/listening.js';

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

/**
 * `GET /metrics` on a listener of its own, apart from the API: it needs no key, is never counted
 * by the API's limits, and by default listens on loopback only, for a scraper on the same host
 * or behind the operator's own network rules.
 */
export async function startMetricsServer(source: MetricsSource, options: { readonly port: number; readonly host: string }): Promise<RunningMetricsServer> {
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    if ((query === -1 ? url : url.slice(0, query)) !== METRICS_PATH) {
      answer(res, 404, 'text/plain; charset=utf-8', `Not found: the figures are at ${METRICS_PATH}.\n`);
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      answer(res, 405, 'text/plain; charset=utf-8', 'Use GET or HEAD.\n');
    } else {
      source.exposition().then(
        // node:http sends no body to HEAD, with the length of the one GET would have.
        (text) => answer(res, 200, source.contentType, text),
        () => answer(res, 500, 'text/plain; charset=utf-8', 'The figures could not be gathered.\n'),
      );
    }
  });
  server.headersTimeout = TIMEOUTS.httpHeadersMs;
  server.requestTimeout = TIMEOUTS.httpRequestMs;
  server.keepAliveTimeout = TIMEOUTS.httpKeepAliveMs;
  const base = await listen(server, options.port, options.host);
  return { url: `${base}${METRICS_PATH}`, close: (graceMs = TIMEOUTS.shutdownGraceMs) => closeGracefully(server, graceMs) };
}

function answer(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) }).end(body);
}
