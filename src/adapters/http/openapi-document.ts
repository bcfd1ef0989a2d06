import { Type, type TSchema } from 'typebox';
import { DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT, TOMBSTONE_RETENTION_MS } from '../../domain/changes.js';
import { ChangesResponseSchema, ChangeViewSchema, MAX_CURSOR_LENGTH } from '../../domain/changes-view.js';
import { TIMEOUTS } from '../../application/timeouts.js';
import { ErrorBodySchema, InvalidApiKey, ServiceUnavailable } from '../../domain/errors.js';
import { VideoObjectJsonLdSchema } from '../../domain/json-ld.js';
import { LookupResultSchema, PdpEntryViewSchema, ProductViewSchema, VideoViewSchema } from '../../domain/lookup-result.js';
import { CHANGES_CACHE_CONTROL } from './changes-response.js';
import { demoTentLookupExample } from './openapi-examples.js';

/*
 * The OpenAPI 3.1 description of everything the HTTP app serves. The test suite validates
 * every response it sees against this object, so a change to a route, a field, a header or
 * an error code that is not made here too fails the tests.
 */

const API = '/api/v1/public';
const MAX_PRODUCT_ID = Number.MAX_SAFE_INTEGER;

const header = (description: string, schema: Record<string, unknown>, required = true) => ({ description, required, schema });

const REQUEST_ID = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
const RATE_LIMIT = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
};
/** The RateLimit-* headers where an answer may come before any key was counted. */
const optionalRateLimit = (limitDescription: string) => ({
  'RateLimit-Limit': header(limitDescription, { type: 'integer', minimum: 1 }, false),
  'RateLimit-Remaining': header('See RateLimit-Limit.', { type: 'integer', minimum: 0 }, false),
  'RateLimit-Reset': header('See RateLimit-Limit.', { type: 'integer', minimum: 1 }, false),
});
const ERROR_CACHING = { 'Cache-Control': header('Errors are never cached.', { type: 'string', const: 'no-store' }) };
const LOOKUP_CACHING = {
  ETag: { $ref: '#/components/headers/ETag' },
  'Cache-Control': { $ref: '#/components/headers/Cache-Control' },
  Vary: { $ref: '#/components/headers/Vary' },
};

/** An error answer whose `error` is one of `codes`; each code gets an example of its own. */
function errorResponse(description: string, examples: Record<string, string>, headers: Record<string, unknown>) {
  return {
    description,
    headers: { ...headers, ...ERROR_CACHING },
    content: {
      'application/json': {
        schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { error: { type: 'string', enum: Object.keys(examples) } } }] },
        examples: Object.fromEntries(
          Object.entries(examples).map(([code, message]) => [code, { summary: code, value: { error: code, message } }]),
        ),
      },
    },
  };
}

const unauthorized = errorResponse(
  'No key in either header (`missing_api_key`), or an unknown, revoked or malformed key, or an `Authorization` header that is not `Bearer <key>` (`invalid_api_key`).',
  {
    missing_api_key: 'An API key is required, in "Authorization: Bearer <key>" or in "X-API-Key: <key>".',
    invalid_api_key: new InvalidApiKey().message,
  },
  { ...REQUEST_ID, 'WWW-Authenticate': header('Always `Bearer`.', { type: 'string', const: 'Bearer' }) },
);

const rateLimited = errorResponse(
  'More requests than the key\'s limit in the current window; or, before any key is checked, too many failed authentications from the caller\'s address in the last minute (then without `RateLimit-*` headers, as no key was counted). Wait `Retry-After` seconds; the message states the same number.',
  { rate_limit_exceeded: 'Rate limit exceeded: retry in 42 seconds.' },
  {
    ...REQUEST_ID,
    ...optionalRateLimit('Requests allowed per window for this key; absent when the address was held back before its key was checked.'),
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  },
);

// Before the key is known a failure carries no rate-limit headers, so they are optional here.
const internalError = errorResponse(
  'Unexpected server error; retry later. Never carries a stack trace, SQL text or internal identifier.',
  { internal_error: 'Unexpected server error; please retry later.' },
  { ...REQUEST_ID, ...optionalRateLimit('As on every authenticated answer, when the key was checked before the failure.') },
);

const serviceUnavailable = errorResponse(
  'The instance cannot reach its storage and what it holds cannot decide the request: a product it has not cached, or a key changed while the database is away. A key it can decide is never answered this way. Retry after `Retry-After` seconds.',
  { service_unavailable: new ServiceUnavailable(TIMEOUTS.storageRetryAfterSeconds).message },
  {
    ...REQUEST_ID,
    ...optionalRateLimit('As on every authenticated answer, when the key was decided before the failure.'),
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  },
);

/**
 * The answer to another method than GET or HEAD on a described path. It has no place in the document,
 * as an operation's responses are that method's own answers: the description states it in words, and
 * the tests check such answers against this.
 */
export const methodNotAllowedResponse = errorResponse(
  'Another method than GET or HEAD on a described path.',
  { method_not_allowed: 'Method POST is not allowed here; use GET or HEAD.' },
  { ...REQUEST_ID, Allow: header('The methods the path accepts.', { type: 'string', const: 'GET, HEAD' }) },
);

const lookupSuccess = {
  description: 'The product. Carries a strong `ETag`: send it back in `If-None-Match` to revalidate a cached copy.',
  headers: { ...REQUEST_ID, ...RATE_LIMIT, ...LOOKUP_CACHING },
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/LookupResponse' },
      examples: { 'TENT-2P': { summary: 'Demo catalog: TENT-2P', value: demoTentLookupExample } },
    },
  },
};

const notModified = {
  description: 'The `If-None-Match` header named the current `ETag`: the cached copy is still current. No body.',
  headers: { ...REQUEST_ID, ...RATE_LIMIT, ...LOOKUP_CACHING },
};

const ifNoneMatch = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'The `ETag` of a cached copy (or a list of them, or `*`). When it names the current one the answer is 304 with no body.',
  schema: { type: 'string' },
};

/** The two lookups share everything but their parameter, their 400 and their 404. */
function lookupOperation(options: {
  operationId: string;
  summary: string;
  description: string;
  parameter: Record<string, unknown>;
  invalid: Record<string, string>;
  notFound: Record<string, string>;
}) {
  return {
    operationId: options.operationId,
    tags: ['Lookup'],
    summary: options.summary,
    description: options.description,
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    parameters: [options.parameter, ifNoneMatch],
    responses: {
      200: lookupSuccess,
      304: notModified,
      400: errorResponse('The path parameter is malformed.', options.invalid, { ...REQUEST_ID, ...RATE_LIMIT }),
      401: unauthorized,
      404: errorResponse('Not in the caller\'s catalog. A product of another partner is answered exactly as a missing one.', options.notFound, { ...REQUEST_ID, ...RATE_LIMIT }),
      429: rateLimited,
      500: internalError,
      503: serviceUnavailable,
    },
  };
}

const RETENTION_DAYS = TOMBSTONE_RETENTION_MS / (24 * 60 * 60 * 1000);

const changesExample = {
  data: [
    { sku: 'TENT-2P', product_id: 1, change: 'upserted', etag: '"Xq3mJ0c8n2bH4r1TzV7kLwP9sD5aG6eY"', changed_at: '2026-05-04T02:00:13.000Z' },
    { sku: 'STOVE-OLD', product_id: 7, change: 'deleted', etag: null, changed_at: '2026-05-04T02:00:13.000Z' },
  ],
  next_cursor: 'c2.2q.Wm3fQ0kzR8vLx2Tb',
  has_more: false,
};

const changesOperation = {
  operationId: 'getChanges',
  tags: ['Changes'],
  summary: 'What changed in your catalog since a cursor',
  description: [
    'Keeps a copy of your catalog current without reading every SKU. Without `cursor`, the feed starts at the beginning: every product now in your catalog appears once, and so, as `deleted`, does each product deleted recently (deletions are kept at least ' + String(RETENTION_DAYS) + ' days). After that, a product appears again each time its lookup answer changes in any way, and once as `deleted` when it leaves your catalog. Between a cursor and now each product appears at most once, at its latest change, oldest change first. An import that changes nothing adds nothing.',
    '',
    'Read pages while `has_more` is `true`, each time with the page\'s `next_cursor`; keep the last `next_cursor` for next time. Then look up only the SKUs listed as `upserted` (with `If-None-Match` if you kept their `ETag`, or not at all when `etag` equals the one you kept) and drop those listed as `deleted`. Each page counts as one request against the rate limit.',
  ].join('\n'),
  security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  parameters: [
    {
      name: 'cursor',
      in: 'query',
      required: false,
      description: 'The `next_cursor` of an earlier page, as it came: opaque, signed by the service and issued for your catalog only. Absent: from the beginning. Anything else, another partner\'s cursor or an altered one included, is 400 `invalid_cursor`.',
      schema: { type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH },
    },
    {
      name: 'limit',
      in: 'query',
      required: false,
      description: `Most changes in one page: a whole number from 1 to ${MAX_CHANGES_LIMIT}. Anything else is 400 \`invalid_limit\`.`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_CHANGES_LIMIT, default: DEFAULT_CHANGES_LIMIT },
    },
  ],
  responses: {
    200: {
      description: 'A page of changes, and the cursor to continue from.',
      headers: {
        ...REQUEST_ID,
        ...RATE_LIMIT,
        'Cache-Control': header('A page is yours alone and true only now: never stored.', { type: 'string', const: CHANGES_CACHE_CONTROL }),
      },
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/ChangesResponse' },
          examples: { page: { summary: 'One product changed, one deleted', value: changesExample } },
        },
      },
    },
    400: errorResponse('A query parameter is malformed: a cursor this service did not issue for your catalog, or a limit out of range.', {
      invalid_cursor: 'The cursor is not one this service issued for your catalog: start again without a cursor.',
      invalid_limit: `limit must be a whole number from 1 to ${MAX_CHANGES_LIMIT}; got "0".`,
    }, { ...REQUEST_ID, ...RATE_LIMIT }),
    401: unauthorized,
    410: errorResponse(`The cursor is older than the feed keeps deleted products (at least ${RETENTION_DAYS} days): a deletion since then may be missing. Start again without a cursor.`, {
      cursor_expired: 'The cursor is older than the feed keeps deleted products: start again without a cursor.',
    }, { ...REQUEST_ID, ...RATE_LIMIT }),
    429: rateLimited,
    500: internalError,
    503: serviceUnavailable,
  },
};

const statusBody = (values: string[], example: string) => ({
  'application/json': {
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['status'],
      properties: { status: { type: 'string', enum: values } },
    },
    example: { status: example },
  },
});

/** Operations that need no key: health, readiness and these docs. */
function serviceOperation(operationId: string, summary: string, description: string, responses: Record<string, unknown>) {
  return { get: { operationId, tags: ['Service'], summary, description, security: [], responses } };
}

/**
 * The domain's schemas as the document's components, in plain JSON: where one named schema holds
 * another, it refers to that one's component instead of repeating it.
 */
function componentSchemas(named: Record<string, TSchema>): Record<string, unknown> {
  const names = new Map<unknown, string>(Object.entries(named).map(([name, schema]) => [schema, name]));
  const plain = (node: unknown, root: boolean): unknown => {
    const name = names.get(node);
    if (!root && name !== undefined) return { $ref: `#/components/schemas/${name}` };
    if (Array.isArray(node)) return node.map((item) => plain(item, false));
    if (typeof node !== 'object' || node === null) return node;
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, plain(value, false)]));
  };
  return Object.fromEntries(Object.entries(named).map(([name, schema]) => [name, plain(schema, true)]));
}

/** The outline of an OpenAPI 3.1 document; the OpenAPI Specification's own schema holds the rest. */
const OPENAPI_DOCUMENT_SCHEMA = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: {
    openapi: { type: 'string', pattern: '^3\\.1\\.[0-9]+$' },
    info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string' } } },
    paths: { type: 'object' },
    components: { type: 'object' },
  },
};

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Partner Catalog Lookup API',
    version: '1.0.0',
    summary: 'Read-only, partner-scoped product content, videos and schema.org VideoObject JSON-LD.',
    description: [
      'Look a product up by your own SKU or by its numeric ID and get its marketing copy, its published videos and its retailer product-page (PDP) entries, each with a schema.org `VideoObject` (`json_ld`) to embed on that page.',
      '',
      '**Keys.** Send `Authorization: Bearer <key>` or `X-API-Key: <key>`; a non-blank `Authorization` always wins. Keys are never read from the query string. Call the API from server-side code only.',
      '',
      '**Check order.** Routing (404 `not_found` for any other path, 405 `method_not_allowed` with `Allow: GET, HEAD` for another method on a known path), then the key (401), the rate limit (429), the input (400) and the lookup (404) or the feed (410). `HEAD` answers like `GET` without a body.',
      '',
      '**Keeping a copy current.** `getChanges` lists what changed in your catalog since a cursor: read it daily, then look up only the products it lists.',
      '',
      '**Rate limit.** 100 requests per key in a fixed 60-second window that starts with the key\'s first request. Every authenticated answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.',
      '',
      '**Caching.** Every 200 lookup carries a strong `ETag`, `Cache-Control: private, max-age=0, must-revalidate` and `Vary: Authorization, X-API-Key`. Keep the body with its ETag (a daily cache is enough), and revalidate with `If-None-Match: <etag>`: 304 with no body means your copy is current. A revalidation counts against the rate limit like any request.',
      '',
      '**Embedding.** Embed only the `json_ld` of the entry whose `pdp_url` equals the page being rendered, in a script element of type `application/ld+json`, with `<`, `>`, `&`, U+2028 and U+2029 escaped as `\\uXXXX` so that no value can end the element. The client package\'s `jsonLdScriptFor` does exactly that.',
      '',
      '**Errors.** Every error is `{ "error": <code>, "message": <text> }` as `application/json`. Besides the codes of each operation: 404 `not_found` for any path not described here (`components/responses/UnknownPath`), 405 `method_not_allowed` with `Allow: GET, HEAD` for another method on a described path.',
    ].join('\n'),
  },
  servers: [{ url: '/', description: 'This server' }],
  tags: [
    { name: 'Lookup', description: 'The public API; every request needs a key.' },
    { name: 'Changes', description: 'What changed in your catalog, to keep a copy current; every request needs a key.' },
    { name: 'Service', description: 'Operational endpoints and these docs; no key.' },
  ],
  security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  paths: {
    [`${API}/sku/{sku}`]: {
      // Routes that stand for this path with an empty parameter: they answer 400 invalid_sku.
      'x-empty-parameter-paths': [`${API}/sku`, `${API}/sku/`],
      get: lookupOperation({
        operationId: 'getProductBySku',
        summary: 'Get a product by SKU',
        description: 'Looks the SKU up in the calling key\'s partner catalog, exactly and case-sensitively (`abc-1` never finds `ABC-1`). An inactive product is still returned, with `status: "inactive"`. An empty SKU (`/sku/` or `/sku`) is 400 `invalid_sku`.',
        parameter: {
          name: 'sku',
          in: 'path',
          required: true,
          description: '1 to 50 letters, digits, `-`, `_` or `.`. Anything else, malformed percent-encoding or an encoded `/` is 400 `invalid_sku`.',
          schema: { type: 'string', minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9._-]+$' },
          example: 'TENT-2P',
        },
        invalid: { invalid_sku: 'SKU may contain only letters, digits, hyphen, underscore and period.' },
        notFound: { sku_not_found: 'No product with SKU "NO-SUCH-SKU" in your catalog.' },
      }),
    },
    [`${API}/products/{id}`]: {
      'x-empty-parameter-paths': [`${API}/products`, `${API}/products/`],
      get: lookupOperation({
        operationId: 'getProductById',
        summary: 'Get a product by ID',
        description: 'Looks a product up by its service-assigned ID (`data.product.id`). The answer is the same body as the SKU lookup, with `data.sku` the product\'s SKU in the caller\'s catalog.',
        parameter: {
          name: 'id',
          in: 'path',
          required: true,
          description: `A positive integer without leading zeros, at most ${MAX_PRODUCT_ID}. Anything else is 400 \`invalid_product_id\`.`,
          schema: { type: 'string', pattern: '^[1-9][0-9]*$', maxLength: 16 },
          example: '1',
        },
        invalid: { invalid_product_id: `Product ID must be a positive integer without leading zeros, at most ${MAX_PRODUCT_ID}.` },
        notFound: { product_not_found: 'No product with ID 999999 in your catalog.' },
      }),
    },
    [`${API}/changes`]: { get: changesOperation },
    '/healthz': serviceOperation('getHealth', 'Process is up', 'Answers 200 while the process runs, without touching storage: a liveness probe.', {
      200: { description: 'The process is up.', headers: { ...REQUEST_ID, 'Cache-Control': header('Never cached.', { type: 'string', const: 'no-store' }) }, content: statusBody(['ok'], 'ok') },
    }),
    '/readyz': serviceOperation('getReadiness', 'Storage is reachable', 'Answers 200 when the storage answers and 503 when it does not: a readiness probe for a load balancer.', {
      200: { description: 'Storage is reachable.', headers: { ...REQUEST_ID, 'Cache-Control': header('Never cached.', { type: 'string', const: 'no-store' }) }, content: statusBody(['ready'], 'ready') },
      503: { description: 'Storage is unreachable.', headers: { ...REQUEST_ID, 'Cache-Control': header('Never cached.', { type: 'string', const: 'no-store' }) }, content: statusBody(['unavailable'], 'unavailable') },
    }),
    '/openapi.json': serviceOperation('getOpenApiDocument', 'This OpenAPI document', 'This document as JSON, for client generators and linters.', {
      200: { description: 'This document.', headers: REQUEST_ID, content: { 'application/json': { schema: OPENAPI_DOCUMENT_SCHEMA } } },
    }),
    '/docs': serviceOperation('getDocs', 'Reference documentation (this page)', 'Swagger UI rendering this document. Its scripts and style sheet come from the service itself, so it needs no internet access and renders over plain HTTP on any host.', {
      200: { description: 'An HTML page rendering this document with Swagger UI, served from the service itself.', headers: REQUEST_ID, content: { 'text/html': { schema: { type: 'string' } } } },
    }),
    '/docs/{asset}': {
      get: {
        operationId: 'getDocsAsset',
        tags: ['Service'],
        summary: 'A script or style sheet of the docs page',
        description: 'The files the `/docs` page loads; any other name is 404 `not_found`.',
        security: [],
        parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string', enum: ['swagger-ui-bundle.js', 'swagger-ui.css', 'docs.js'] } }],
        responses: {
          200: {
            description: 'The file.',
            headers: REQUEST_ID,
            content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
          },
          404: { $ref: '#/components/responses/UnknownPath' },
        },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: '`Authorization: Bearer <key>`; the scheme name in any letter case. Keys are `pcat_live_` followed by 32 to 64 letters and digits.',
      },
      apiKeyHeader: {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description: '`X-API-Key: <key>`; used only when `Authorization` is absent or blank.',
      },
    },
    headers: {
      'X-Request-Id': header('Yours if it is 1 to 128 of `A-Z a-z 0-9 . _ : -`, else a fresh UUID; the request\'s log line holds it.', { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' }),
      'RateLimit-Limit': header('Requests allowed per window for this key.', { type: 'integer', minimum: 1 }),
      'RateLimit-Remaining': header('Requests left in the current window.', { type: 'integer', minimum: 0 }),
      'RateLimit-Reset': header('Whole seconds until the window ends.', { type: 'integer', minimum: 1 }),
      'Retry-After': header('Whole seconds to wait before retrying.', { type: 'integer', minimum: 1, maximum: 60 }),
      ETag: header('Strong entity tag of the body.', { type: 'string', pattern: '^"[\\x21\\x23-\\x7e]*"$' }),
      'Cache-Control': header('Store privately, revalidate before each use.', { type: 'string', const: 'private, max-age=0, must-revalidate' }),
      Vary: header('The answer depends on the key.', { type: 'string', const: 'Authorization, X-API-Key' }),
    },
    responses: {
      UnknownPath: errorResponse('Any path this document does not describe.', { not_found: 'No such endpoint.' }, REQUEST_ID),
    },
    schemas: componentSchemas({
      LookupResponse: Type.Object({ data: LookupResultSchema }, { additionalProperties: false }),
      ChangesResponse: ChangesResponseSchema,
      Change: ChangeViewSchema,
      LookupResult: LookupResultSchema,
      Product: ProductViewSchema,
      Video: VideoViewSchema,
      PdpEntry: PdpEntryViewSchema,
      VideoObject: VideoObjectJsonLdSchema,
      Error: ErrorBodySchema,
    }),
  },
};
