import { errorFromResponse, PartnerCatalogError } from './errors.js';
import type { LookupResult } from './types.js';

/** A lookup kept with the ETag it came with. */
export interface CachedLookup {
  readonly etag: string;
  readonly result: LookupResult;
}

/** Where the client keeps lookups to revalidate; a `Map` will do, or any store with this shape. */
export interface LookupCache {
  get(url: string): CachedLookup | undefined;
  set(url: string, entry: CachedLookup): unknown;
}

export interface ClientOptions {
  /** Where the API is, e.g. `https://catalog.example.com` (the path `/api/v1/public` is added). */
  readonly baseUrl: string;
  /** A `pcat_live_…` key. Server-side only: never ship it to a browser. */
  readonly apiKey: string;
  /** How many times a 429 is retried after its `Retry-After`; default 2, 0 to never retry. */
  readonly maxRetries?: number;
  /** Keeps lookups and revalidates them with `If-None-Match`; a 304 answers from here. */
  readonly cache?: LookupCache;
  /** Waits between retries; injectable for tests. */
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** The fetch to use; Node's global one by default. */
  readonly fetch?: typeof fetch;
}

export interface PartnerCatalogClient {
  /** The product with this SKU in your catalog; throws PartnerCatalogError (`sku_not_found`, ...). */
  getBySku(sku: string): Promise<LookupResult>;
  /** The product with this service-assigned ID; throws PartnerCatalogError (`product_not_found`, ...). */
  getById(id: number | string): Promise<LookupResult>;
}

const DEFAULT_MAX_RETRIES = 2;
const API = '/api/v1/public';

export function createClient(options: ClientOptions): PartnerCatalogClient {
  const base = options.baseUrl.replace(/\/+$/, '') + API;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const fetchImpl = options.fetch ?? fetch;
  const { cache, apiKey } = options;

  async function lookup(url: string): Promise<LookupResult> {
    const cached = cache?.get(url);
    for (let attempt = 0; ; attempt += 1) {
      const headers: Record<string, string> = { Accept: 'application/json' };
      // A blank key is sent as none, so the answer is the server's own `missing_api_key`.
      if (apiKey.trim() !== '') headers.Authorization = `Bearer ${apiKey}`;
      if (cached !== undefined) headers['If-None-Match'] = cached.etag;
      const response = await fetchImpl(url, { headers });
      if (response.status === 304 && cached !== undefined) return cached.result;
      if (response.status === 200) {
        const { data } = (await response.json()) as { data: LookupResult };
        const etag = response.headers.get('ETag');
        // Without an ETag there is nothing to revalidate with, so nothing is kept.
        if (cache !== undefined && etag !== null) cache.set(url, { etag, result: data });
        return data;
      }
      const error = response.ok || response.status === 304 ? unexpected(response) : await errorFromResponse(response);
      if (error.code !== 'rate_limit_exceeded' || attempt >= maxRetries) throw error;
      await sleep((error.retryAfter ?? 1) * 1000);
    }
  }

  return {
    getBySku: (sku) => lookup(`${base}/sku/${encodeURIComponent(sku)}`),
    getById: (id) => lookup(`${base}/products/${encodeURIComponent(String(id))}`),
  };
}

function unexpected(response: Response): PartnerCatalogError {
  return new PartnerCatalogError({
    status: response.status,
    code: 'unexpected_response',
    message: `Unexpected answer ${response.status} to a lookup.`,
    requestId: response.headers.get('X-Request-Id') ?? undefined,
  });
}
