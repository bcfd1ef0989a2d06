import { errorFromResponse, PartnerCatalogError, type ErrorCode } from './errors.js';
import type { BatchLookupResponse, Change, ChangesResponse, LookupResult } from './types.js';

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
  /** A `pcat_live_…` key, or a `pcat_test_…` key to read your sandbox. Server-side only: never ship it to a browser. */
  readonly apiKey: string;
  /** How many times a 429, or a 503 `service_unavailable`, is retried after its `Retry-After`; default 2, 0 to never retry. */
  readonly maxRetries?: number;
  /** Keeps lookups and revalidates them with `If-None-Match`; a 304 answers from here. */
  readonly cache?: LookupCache;
  /** Waits between retries; injectable for tests. */
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** The fetch to use; Node's global one by default. */
  readonly fetch?: typeof fetch;
  /**
   * Told once per operation, on its first answer that says the operation is deprecated (the
   * `Deprecation` header, with `Sunset` and a `Link` when the API sends them). Without it, the
   * client emits one Node `DeprecationWarning` per operation (code `PCAT_DEPRECATED_OPERATION`),
   * which Node prints to stderr and `process.on('warning')` receives.
   */
  readonly onDeprecation?: (notice: DeprecationNotice) => void;
}

/** The API's operations, by the names its OpenAPI document gives them. */
export type OperationId = 'getProductBySku' | 'getProductById' | 'getProducts' | 'getChanges';

/** An operation the API announced as deprecated: since when, until when, and where to read more. */
export interface DeprecationNotice {
  readonly operation: OperationId;
  /** From `Deprecation: @<unix seconds>`. */
  readonly deprecatedSince: Date;
  /** From `Sunset`, when the API set a date after which the operation is no longer served. */
  readonly sunset?: Date;
  /** The `Link` with `rel="deprecation"`: a page saying what replaces it. */
  readonly link?: string;
}

export interface ChangesOptions {
  /** The `cursor` of an earlier run; none to start from the beginning (every product now in your catalog). */
  readonly cursor?: string | undefined;
  /** Changes per page, 1 to 1000 (the API's default is 100). Each page is one request. */
  readonly limit?: number | undefined;
}

/**
 * The changes since a cursor, one at a time, reading page after page until there are no more.
 * Iterating again continues from `cursor`, so a later loop picks up what changed since.
 */
export interface ChangeFeed extends AsyncIterable<Change> {
  /**
   * Where to start next time; keep it with your copy. It moves past a page once the loop has
   * finished with that page's last change, so a loop that stops early (an exception, a `break`)
   * leaves it before the unfinished page, whose changes are listed again next time.
   * `undefined` until the first page when no cursor was given.
   */
  readonly cursor: string | undefined;
}

/** A batch's answer, `not_found` typed by what was asked: SKUs as strings, IDs as numbers. */
export type ProductBatch<Value extends string | number> = Omit<BatchLookupResponse, 'not_found'> & { not_found: Value[] };

export interface PartnerCatalogClient {
  /** The product with this SKU in your catalog; throws PartnerCatalogError (`sku_not_found`, ...). */
  getBySku(sku: string): Promise<LookupResult>;
  /** The product with this service-assigned ID; throws PartnerCatalogError (`product_not_found`, ...). */
  getById(id: number | string): Promise<LookupResult>;
  /**
   * The products with these SKUs: `data` those found, in the order asked, `not_found` the SKUs your
   * catalog does not hold. Each SKU once; 100 per request, so more than 100 cost a request per 100.
   * Throws PartnerCatalogError (`invalid_sku` naming the first bad SKU's place in its request, ...).
   */
  getManyBySku(skus: readonly string[]): Promise<ProductBatch<string>>;
  /** The same by service-assigned IDs; `not_found` holds numbers. Throws PartnerCatalogError (`invalid_product_id`, ...). */
  getManyById(ids: readonly (number | string)[]): Promise<ProductBatch<number>>;
  /** What changed in your catalog since `cursor`; throws PartnerCatalogError (`cursor_expired`, `invalid_cursor`, ...) while iterating. */
  changes(options?: ChangesOptions): ChangeFeed;
}

const DEFAULT_MAX_RETRIES = 2;
/** Answers worth waiting out: the key's limit, and a server that cannot reach its storage for a moment. */
const RETRIED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['rate_limit_exceeded', 'service_unavailable']);
const API = '/api/v1/public';
/** Most values the API takes in one batch request. */
const BATCH_SIZE = 100;

export function createClient(options: ClientOptions): PartnerCatalogClient {
  const base = options.baseUrl.replace(/\/+$/, '') + API;
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const fetchImpl = options.fetch ?? fetch;
  const { cache, apiKey } = options;
  const onDeprecation = options.onDeprecation ?? warnOfDeprecation;
  /** Operations whose deprecation was told already: once each, however many answers say it. */
  const told = new Set<OperationId>();

  /** GETs `url` with the key, waiting out 429s and 503s; the answer if `expected` takes it, else the error it is. */
  async function get(operation: OperationId, url: string, expected: (status: number) => boolean, extraHeaders: Record<string, string> = {}): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
      const headers: Record<string, string> = { Accept: 'application/json', ...extraHeaders };
      // A blank key is sent as none, so the answer is the server's own `missing_api_key`.
      if (apiKey.trim() !== '') headers.Authorization = `Bearer ${apiKey}`;
      const response = await fetchImpl(url, { headers });
      if (!told.has(operation)) {
        const notice = deprecationOf(operation, response.headers);
        if (notice !== null) {
          told.add(operation);
          onDeprecation(notice);
        }
      }
      if (expected(response.status)) return response;
      const error = response.ok || response.status === 304 ? unexpected(response) : await errorFromResponse(response);
      if (!RETRIED.has(error.code) || attempt >= maxRetries) throw error;
      await sleep((error.retryAfter ?? 1) * 1000);
    }
  }

  async function lookup(operation: OperationId, url: string): Promise<LookupResult> {
    const cached = cache?.get(url);
    const response = await get(
      operation,
      url,
      (status) => status === 200 || (status === 304 && cached !== undefined),
      cached === undefined ? {} : { 'If-None-Match': cached.etag },
    );
    if (response.status === 304 && cached !== undefined) return cached.result;
    const { data } = (await response.json()) as { data: LookupResult };
    const etag = response.headers.get('ETag');
    // Without an ETag there is nothing to revalidate with, so nothing is kept.
    if (cache !== undefined && etag !== null) cache.set(url, { etag, result: data });
    return data;
  }

  /** Each value once, in the order first asked, 100 to a request; the answers joined in that order. */
  async function many<Value extends string | number>(parameter: 'sku' | 'id', values: readonly (string | number)[]): Promise<ProductBatch<Value>> {
    const unique = [...new Set(values.map(String))];
    const answer: ProductBatch<Value> = { data: [], not_found: [] };
    for (let start = 0; start < unique.length; start += BATCH_SIZE) {
      const list = unique.slice(start, start + BATCH_SIZE).map(encodeURIComponent).join(',');
      const page = (await (await get('getProducts', `${base}/products?${parameter}=${list}`, (status) => status === 200)).json()) as ProductBatch<Value>;
      answer.data.push(...page.data);
      answer.not_found.push(...page.not_found);
    }
    return answer;
  }

  function changes(changesOptions: ChangesOptions = {}): ChangeFeed {
    let cursor = changesOptions.cursor;
    const { limit } = changesOptions;
    async function* pages(): AsyncGenerator<Change, void, undefined> {
      for (;;) {
        const query = new URLSearchParams();
        if (cursor !== undefined) query.set('cursor', cursor);
        if (limit !== undefined) query.set('limit', String(limit));
        const page = (await (await get('getChanges', `${base}/changes?${query.toString()}`, (status) => status === 200)).json()) as ChangesResponse;
        yield* page.data;
        // Reached only once the caller asked for the change after the page's last one.
        cursor = page.next_cursor;
        if (!page.has_more) return;
      }
    }
    return {
      get cursor() {
        return cursor;
      },
      [Symbol.asyncIterator]: () => pages(),
    };
  }

  return {
    getBySku: (sku) => lookup('getProductBySku', `${base}/sku/${encodeURIComponent(sku)}`),
    getById: (id) => lookup('getProductById', `${base}/products/${encodeURIComponent(String(id))}`),
    getManyBySku: (skus) => many('sku', skus),
    getManyById: (ids) => many('id', ids),
    changes,
  };
}

function unexpected(response: Response): PartnerCatalogError {
  return new PartnerCatalogError({
    status: response.status,
    code: 'unexpected_response',
    message: `Unexpected answer ${response.status} from the API.`,
    requestId: response.headers.get('X-Request-Id') ?? undefined,
  });
}

/**
 * What an answer's headers say of its operation's deprecation: null when it has no `Deprecation`
 * header of the form `@<unix seconds>`. `Sunset` and the deprecation `Link` are taken when well formed.
 */
function deprecationOf(operation: OperationId, headers: Headers): DeprecationNotice | null {
  const since = /^@(-?\d+)$/.exec(headers.get('Deprecation')?.trim() ?? '');
  if (since === null) return null;
  const sunset = new Date(headers.get('Sunset') ?? '');
  const link = /<([^>]*)>\s*;[^,]*rel="?deprecation"?/i.exec(headers.get('Link') ?? '')?.[1];
  return {
    operation,
    deprecatedSince: new Date(Number(since[1]) * 1000),
    ...(Number.isNaN(sunset.getTime()) ? {} : { sunset }),
    ...(link === undefined ? {} : { link }),
  };
}

/** Node's warning code of the default notice, for `process.on('warning')` or `--disable-warning`. */
export const DEPRECATED_OPERATION_WARNING = 'PCAT_DEPRECATED_OPERATION';

/** The default: a Node DeprecationWarning naming the operation, its sunset and where to read more. */
function warnOfDeprecation(notice: DeprecationNotice): void {
  const until = notice.sunset === undefined ? '' : `, served until ${notice.sunset.toISOString()}`;
  process.emitWarning(
    `Partner Catalog API: ${notice.operation} is deprecated since ${notice.deprecatedSince.toISOString()}${until}${notice.link === undefined ? '' : `; see ${notice.link}`}`,
    { type: 'DeprecationWarning', code: DEPRECATED_OPERATION_WARNING },
  );
}
