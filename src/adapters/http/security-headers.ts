import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import type { HeaderList } from './answer.js';

/**
 * Helmet's defaults less `upgrade-insecure-requests`, for the docs page and its files. On a plain-HTTP
 * host that is not loopback (a LAN address) that directive turns the page's own script and style
 * requests into https ones, which fail, and the page stays blank. HSTS stays: browsers ignore it over
 * plain HTTP. The API's own answers carry the short set below instead.
 */
export const DOCS_HELMET_OPTIONS: Readonly<HelmetOptions> = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

/**
 * The headers helmet sets on every answer with these options (its defaults without), read once by
 * running helmet against a recording response, so the pipeline writes them as plain pairs.
 */
export function helmetHeaders(options?: Readonly<HelmetOptions>): HeaderList {
  const recorded = new Map<string, readonly [string, string]>();
  const response = {
    setHeader(name: string, value: unknown) {
      recorded.set(name.toLowerCase(), [name, String(value)]);
      return response;
    },
    removeHeader(name: string) {
      recorded.delete(name.toLowerCase());
    },
    getHeader(name: string) {
      return recorded.get(name.toLowerCase())?.[1];
    },
  };
  const request: unknown = {};
  const state: { outcome: 'pending' | 'done' | 'failed' } = { outcome: 'pending' };
  helmet(options)(request as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    state.outcome = error === undefined || error === null ? 'done' : 'failed';
  });
  // helmet is synchronous and cannot fail; if that ever changes, fail at start, not per request.
  if (state.outcome !== 'done') throw new Error(`helmet's headers could not be read (${state.outcome})`);
  return [...recorded.values()].flat();
}

/** A year, as HSTS preload lists ask. */
const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * The headers of every API answer: JSON, never a page, so the short set a REST API needs (no
 * sniffing, no framing, nothing loaded, no referrer) rather than a page's policy; HSTS when partners
 * reach the API over https.
 */
export function apiSecurityHeaders(publicBaseUrl: string): HeaderList {
  return [
    'X-Content-Type-Options', 'nosniff',
    'Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'",
    'X-Frame-Options', 'DENY',
    'Referrer-Policy', 'no-referrer',
    ...(new URL(publicBaseUrl).protocol === 'https:' ? ['Strict-Transport-Security', HSTS] : []),
  ];
}
