import type { TSchema } from 'typebox';
import type { LookupById } from '../../application/lookup/lookup-by-id.js';
import type { LookupBySku } from '../../application/lookup/lookup-by-sku.js';
import type { LookupManyById } from '../../application/lookup/lookup-many-by-id.js';
import type { LookupManyBySku } from '../../application/lookup/lookup-many-by-sku.js';
import type { ReadinessProbe } from '../../application/common/readiness-probe.js';
import type { ReadChanges } from '../../application/changes/read-changes.js';
import { DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT, TOMBSTONE_RETENTION_MS } from '../../domain/changes.js';
import { MAX_CURSOR_LENGTH } from '../../domain/changes-view.js';
import { DomainError, type DomainErrorCode } from '../../domain/errors.js';
import type { Principal } from '../../domain/api-key.js';
import type { LookupAnswer } from '../../domain/lookup-answer.js';
import { MAX_BATCH_VALUES } from '../../domain/lookup-batch.js';
import { ProductIdSchema } from '../../domain/product-id.js';
import { SkuSchema } from '../../domain/sku.js';
import { CHANGES_CACHE_CONTROL, changesAnswer } from './changes-response.js';
import { DOCS_ASSETS, DOCS_PAGE } from './docs-page.js';
import { bodyAnswer, jsonAnswer, type Answer } from './answer.js';
import { errorAnswer } from './error-response.js';
import { lookupAnswer } from './lookup-response.js';
import { refuseAsAsked } from './sandbox-answers.js';
import { describeOperations, header, RATE_LIMIT, REQUEST_ID } from './openapi-document.js';
import { demoTentLookupExample } from './openapi-examples.js';
import { DEFAULT_PUBLIC_BASE_URL, pathTemplate, type DocumentInfo, type Operation, type OperationRequest } from './operation.js';
import { MAX_QUERY_PARAMETERS, singleQueryValue } from './query-parameters.js';

/** What the API's operations run: its use cases, and the probe readiness answers from. */
export interface ApiUseCases {
  readonly lookupBySku: LookupBySku;
  readonly lookupById: LookupById;
  readonly lookupManyBySku: LookupManyBySku;
  readonly lookupManyById: LookupManyById;
  readonly readChanges: ReadChanges;
  readonly readiness: ReadinessProbe;
}

const API = '/api/v1/public';
const MAX_PRODUCT_ID = Number.MAX_SAFE_INTEGER;
const RETENTION_DAYS = TOMBSTONE_RETENTION_MS / (24 * 60 * 60 * 1000);

const LOOKUP_CACHING = {
  ETag: { $ref: '#/components/headers/ETag' },
  'Cache-Control': { $ref: '#/components/headers/Cache-Control' },
  Vary: { $ref: '#/components/headers/Vary' },
};
/** The health checks' answers are true only now. */
const STATUS_CACHE_CONTROL = 'no-store';
const NEVER_CACHED = { 'Cache-Control': header('Never cached.', { type: 'string', const: STATUS_CACHE_CONTROL }) };

/** The lookups answer alike: the answer with its ETag, or 304 when If-None-Match names it. */
const lookupResponses = (what: string, schema: string, examples: Record<string, { summary: string; value: unknown }>) => ({
  200: {
    description: `${what} Carries a strong \`ETag\`: send it back in \`If-None-Match\` to revalidate a cached copy.`,
    headers: { ...REQUEST_ID, ...RATE_LIMIT, ...LOOKUP_CACHING },
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` }, examples } },
  },
  304: {
    description: 'The `If-None-Match` header named the current `ETag`: the cached copy is still current. No body.',
    headers: { ...REQUEST_ID, ...RATE_LIMIT, ...LOOKUP_CACHING },
  },
});
const LOOKUP_RESPONSES = lookupResponses('The product.', 'LookupResponse', { 'TENT-2P': { summary: 'Demo catalog: TENT-2P', value: demoTentLookupExample } });

const INVALID_QUERY = {
  when: `A query string of more than ${MAX_QUERY_PARAMETERS} parameters: it is refused whole, never read in part.`,
  example: `The query string has 1001 parameters; send at most ${MAX_QUERY_PARAMETERS}.`,
};

/** A batch's list parameter: one parameter of comma-separated values, each as its single lookup takes it. */
const batchParameter = (name: string, what: string, schema: TSchema, example: readonly (string | number)[]) => ({
  name,
  in: 'query',
  required: false,
  description: `1 to ${MAX_BATCH_VALUES} ${what}, separated by commas (sent as they are or as \`%2C\`), in one \`${name}\` parameter. Send \`sku\` or \`id\`, not both.`,
  style: 'form',
  explode: false,
  schema: { type: 'array', items: schema, minItems: 1, maxItems: MAX_BATCH_VALUES },
  example,
} as const);

/** Which of `sku` and `id` a batch is of, and its values: exactly one of them, given once. */
function batchOf(request: OperationRequest): { by: 'sku' | 'id'; values: string[] } {
  const sku = singleQueryValue(request.query('sku'), 'invalid_batch', 'sku');
  const id = singleQueryValue(request.query('id'), 'invalid_batch', 'id');
  if (sku !== undefined && id !== undefined) throw new DomainError('invalid_batch', 'Send sku or id, not both.');
  if (sku !== undefined) return { by: 'sku', values: sku.split(',') };
  if (id !== undefined) return { by: 'id', values: id.split(',') };
  throw new DomainError('invalid_batch', `Send sku or id, holding 1 to ${MAX_BATCH_VALUES} comma-separated values.`);
}

const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'The `ETag` of a cached copy (or a list of them, or `*`). When it names the current one the answer is 304 with no body.',
  schema: { type: 'string' },
} as const;

const statusBody = (values: string[], example: string) => ({
  'application/json': {
    schema: { type: 'object', additionalProperties: false, required: ['status'], properties: { status: { type: 'string', enum: values } } },
    example: { status: example },
  },
});

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

const statusAnswer = (status: number, value: string): Answer => jsonAnswer(status, JSON.stringify({ status: value }), ['Cache-Control', STATUS_CACHE_CONTROL]);

/** The two lookups differ only in their parameter, its codes and the use case they run. */
function lookupOperation(lookup: {
  operationId: string;
  /** Ends in the one parameter it looks up by. */
  path: string;
  summary: string;
  description: string;
  parameterDescription: string;
  schema: TSchema;
  example: string | number;
  invalid: [DomainErrorCode, string];
  notFound: [DomainErrorCode, string];
  find: (useCases: ApiUseCases, principal: Principal, value: string) => Promise<LookupAnswer>;
}): Operation<ApiUseCases> {
  const parameter = pathTemplate(lookup.path).parameter?.name;
  if (parameter === undefined) throw new Error(`${lookup.operationId}: its path must end in the parameter it looks up by`);
  return {
    operationId: lookup.operationId,
    path: lookup.path,
    tag: 'Lookup',
    summary: lookup.summary,
    description: lookup.description,
    key: true,
    readsBeforeCount: true,
    emptyParameterPaths: true,
    parameters: [
      { name: parameter, in: 'path', required: true, description: lookup.parameterDescription, schema: lookup.schema, example: lookup.example },
      IF_NONE_MATCH,
    ],
    errors: {
      [lookup.invalid[0]]: { when: 'The path parameter is malformed.', example: lookup.invalid[1] },
      [lookup.notFound[0]]: { when: 'Not in the caller\'s catalog. A product of another partner is answered exactly as a missing one.', example: lookup.notFound[1] },
    },
    responses: LOOKUP_RESPONSES,
    answer: (useCases, request, principal) =>
      lookup.find(useCases, principal!, request.params[parameter] ?? '').then((answer) => lookupAnswer(answer, request.header('if-none-match'))),
  };
}

/** Every operation the API's listener serves, each declared once (docs/architecture.md, operations). */
export const OPERATIONS: readonly Operation<ApiUseCases>[] = [
  lookupOperation({
    operationId: 'getProductBySku',
    path: `${API}/sku/{sku}`,
    summary: 'Get a product by SKU',
    description: 'Looks the SKU up in the calling key\'s partner catalog, exactly and case-sensitively (`abc-1` never finds `ABC-1`). An inactive product is still returned, with `status: "inactive"`. An empty SKU (`/sku/` or `/sku`) is 400 `invalid_sku`. A test key (`pcat_test_`) reads its sandbox, where `TEST-429` and `TEST-503` answer those errors on purpose, as the real ones are answered, and `TEST-404` is never found.',
    parameterDescription: '1 to 50 letters, digits, `-`, `_` or `.`. Anything else, malformed percent-encoding or an encoded `/` is 400 `invalid_sku`.',
    schema: SkuSchema,
    example: 'TENT-2P',
    invalid: ['invalid_sku', 'SKU may contain only letters, digits, hyphen, underscore and period.'],
    notFound: ['sku_not_found', 'No product with SKU "NO-SUCH-SKU" in your catalog.'],
    find: ({ lookupBySku }, principal, sku) => {
      refuseAsAsked(principal, [sku]);
      return lookupBySku.execute({ partnerId: principal.catalogId, sku });
    },
  }),
  lookupOperation({
    operationId: 'getProductById',
    path: `${API}/products/{id}`,
    summary: 'Get a product by ID',
    description: 'Looks a product up by its service-assigned ID (`data.product.id`). The answer is the same body as the SKU lookup, with `data.sku` the product\'s SKU in the caller\'s catalog.',
    parameterDescription: `A positive integer without leading zeros, at most ${MAX_PRODUCT_ID}. Anything else is 400 \`invalid_product_id\`.`,
    schema: ProductIdSchema,
    example: 1,
    invalid: ['invalid_product_id', `Product ID must be a positive integer without leading zeros, at most ${MAX_PRODUCT_ID}.`],
    notFound: ['product_not_found', 'No product with ID 999999 in your catalog.'],
    find: ({ lookupById }, principal, id) => lookupById.execute({ partnerId: principal.catalogId, id }),
  }),
  {
    operationId: 'getProducts',
    path: `${API}/products`,
    tag: 'Lookup',
    summary: 'Get many products by SKU or by ID',
    description: `Looks up to ${MAX_BATCH_VALUES} products at once, each exactly as its single lookup would, for a page that shows many or to re-read a catalog: \`?sku=TENT-2P,abc-1\` or \`?id=1,2,3\`. The whole batch counts as one request against the rate limit. Each product found is in \`data\`, in the order its value first appears; a value given twice is answered once. \`not_found\` lists the values with no product in your catalog. \`GET /api/v1/public/products/\` (an empty ID) is still \`getProductById\`'s 400 \`invalid_product_id\`.`,
    key: true,
    parameters: [
      batchParameter('sku', 'SKUs', SkuSchema, ['TENT-2P', 'abc-1']),
      batchParameter('id', 'product IDs', ProductIdSchema, [1, 2, 3]),
      IF_NONE_MATCH,
    ],
    errors: {
      invalid_batch: {
        when: `Neither \`sku\` nor \`id\`, both, one of them given twice, or more than ${MAX_BATCH_VALUES} values.`,
        example: `A batch holds 1 to ${MAX_BATCH_VALUES} values; this one has 101.`,
      },
      invalid_sku: { when: 'A value of `sku` is malformed, or empty between commas; the message names the first one\'s place.', example: 'Value 2 of 3: SKU must not be empty.' },
      invalid_product_id: { when: 'A value of `id` is malformed; the message names the first one\'s place.', example: `Value 1 of 2: Product ID must be a positive integer without leading zeros, at most ${MAX_PRODUCT_ID}.` },
      invalid_query: INVALID_QUERY,
    },
    responses: lookupResponses('The products found, and the values not found.', 'BatchLookupResponse', {
      'TENT-2P,NO-SUCH-SKU': { summary: 'Demo catalog: ?sku=TENT-2P,NO-SUCH-SKU', value: { data: [demoTentLookupExample.data], not_found: ['NO-SUCH-SKU'] } },
    }),
    answer: async ({ lookupManyBySku, lookupManyById }, request, principal) => {
      const partnerId = principal!.catalogId;
      const { by, values } = batchOf(request);
      if (by === 'sku') refuseAsAsked(principal!, values);
      const batch = by === 'sku' ? await lookupManyBySku.execute({ partnerId, skus: values }) : await lookupManyById.execute({ partnerId, ids: values });
      return lookupAnswer(batch, request.header('if-none-match'));
    },
  },
  {
    operationId: 'getChanges',
    path: `${API}/changes`,
    tag: 'Changes',
    summary: 'What changed in your catalog since a cursor',
    description: [
      'Keeps a copy of your catalog current without reading every SKU. Without `cursor`, the feed starts at the beginning: every product now in your catalog appears once, and so, as `deleted`, does each product deleted recently (deletions are kept at least ' + String(RETENTION_DAYS) + ' days). After that, a product appears again each time its lookup answer changes in any way, and once as `deleted` when it leaves your catalog. Between a cursor and now each product appears at most once, at its latest change, oldest change first. An import that changes nothing adds nothing.',
      '',
      'Read pages while `has_more` is `true`, each time with the page\'s `next_cursor`; keep the last `next_cursor` for next time. Then look up only the SKUs listed as `upserted` (with `If-None-Match` if you kept their `ETag`, or not at all when `etag` equals the one you kept) and drop those listed as `deleted`. Each page counts as one request against the rate limit.',
    ].join('\n'),
    key: true,
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
    errors: {
      invalid_cursor: {
        when: 'A cursor this service did not issue for your catalog.',
        example: 'The cursor is not one this service issued for your catalog: start again without a cursor.',
      },
      invalid_limit: { when: 'A limit out of range.', example: `limit must be a whole number from 1 to ${MAX_CHANGES_LIMIT}; got "0".` },
      invalid_query: INVALID_QUERY,
      cursor_expired: {
        when: `The cursor is older than the feed keeps deleted products (at least ${RETENTION_DAYS} days): a deletion since then may be missing. Start again without a cursor.`,
        example: 'The cursor is older than the feed keeps deleted products: start again without a cursor.',
      },
    },
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
            examples: {
              page: {
                summary: 'One product changed, one deleted',
                value: {
                  data: [
                    { sku: 'TENT-2P', product_id: 1, change: 'upserted', etag: '"Xq3mJ0c8n2bH4r1TzV7kLwP9sD5aG6eY"', changed_at: '2026-05-04T02:00:13.000Z' },
                    { sku: 'STOVE-OLD', product_id: 7, change: 'deleted', etag: null, changed_at: '2026-05-04T02:00:13.000Z' },
                  ],
                  next_cursor: 'c2.2q.Wm3fQ0kzR8vLx2Tb',
                  has_more: false,
                },
              },
            },
          },
        },
      },
    },
    // Other query parameters are ignored, as on the lookups, as long as the query can be read whole.
    answer: async ({ readChanges }, request, principal) => changesAnswer(await readChanges.execute({
      partnerId: principal!.catalogId,
      limit: singleQueryValue(request.query('limit'), 'invalid_limit', 'limit'),
      cursor: singleQueryValue(request.query('cursor'), 'invalid_cursor', 'cursor'),
    })),
  },
  {
    operationId: 'getHealth',
    path: '/healthz',
    tag: 'Service',
    summary: 'Process is up',
    description: 'Answers 200 while the process runs, without touching storage: a liveness probe.',
    key: false,
    responses: { 200: { description: 'The process is up.', headers: { ...REQUEST_ID, ...NEVER_CACHED }, content: statusBody(['ok'], 'ok') } },
    answer: () => statusAnswer(200, 'ok'),
  },
  {
    operationId: 'getReadiness',
    path: '/readyz',
    tag: 'Service',
    summary: 'Storage is reachable',
    description: 'Answers 200 when the instance can answer lookups (its storage answers and, on MySQL with Redis, it holds its key set) and 503 when it cannot: a readiness probe for a load balancer.',
    key: false,
    responses: {
      200: { description: 'Storage is reachable.', headers: { ...REQUEST_ID, ...NEVER_CACHED }, content: statusBody(['ready'], 'ready') },
      503: { description: 'Storage is unreachable.', headers: { ...REQUEST_ID, ...NEVER_CACHED }, content: statusBody(['unavailable'], 'unavailable') },
    },
    answer: async ({ readiness }) => ((await readiness.isReady().catch(() => false)) ? statusAnswer(200, 'ready') : statusAnswer(503, 'unavailable')),
  },
  {
    operationId: 'getOpenApiDocument',
    path: '/openapi.json',
    tag: 'Service',
    summary: 'This OpenAPI document',
    description: 'This document as JSON, for client generators and linters.',
    key: false,
    responses: { 200: { description: 'This document.', headers: REQUEST_ID, content: { 'application/json': { schema: OPENAPI_DOCUMENT_SCHEMA } } } },
    answer: (_useCases, request) => jsonAnswer(200, servedDocument(request.publicBaseUrl, request.documentInfo)),
  },
  {
    operationId: 'getDocs',
    path: '/docs',
    tag: 'Service',
    summary: 'Reference documentation (this page)',
    description: 'Swagger UI rendering this document. Its scripts and style sheet come from the service itself, so it needs no internet access and renders over plain HTTP on any host.',
    key: false,
    headers: 'docs',
    responses: {
      200: { description: 'An HTML page rendering this document with Swagger UI, served from the service itself.', headers: REQUEST_ID, content: { 'text/html': { schema: { type: 'string' } } } },
    },
    answer: () => bodyAnswer(200, 'text/html; charset=utf-8', DOCS_PAGE),
  },
  {
    operationId: 'getDocsAsset',
    path: '/docs/{asset}',
    tag: 'Service',
    summary: 'A script or style sheet of the docs page',
    description: 'The files the `/docs` page loads; any other name is 404 `not_found`.',
    key: false,
    headers: 'docs',
    parameters: [{ name: 'asset', in: 'path', required: true, description: 'The file\'s name.', schema: { type: 'string', enum: [...DOCS_ASSETS.keys()] } }],
    responses: {
      200: {
        description: 'The file.',
        headers: REQUEST_ID,
        content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
      },
      404: { $ref: '#/components/responses/UnknownPath' },
    },
    answer: async (_useCases, request) => {
      const asset = DOCS_ASSETS.get(request.params.asset ?? '');
      if (asset === undefined) return errorAnswer('not_found', 'No such endpoint.');
      return bodyAnswer(200, asset.type, await asset.load(), ['Cache-Control', 'public, max-age=3600']);
    },
  },
];

/** The path that looks a SKU up, as the demo's banner shows it. */
export function skuLookupPath(sku: string): string {
  const operation = OPERATIONS.find(({ operationId }) => operationId === 'getProductBySku');
  return pathTemplate(operation!.path).parameter!.prefix + encodeURIComponent(sku);
}

/** The OpenAPI 3.1 document of these operations, as `/openapi.json` serves it on the default address. */
export const openApiDocument = describeOperations(OPERATIONS, DEFAULT_PUBLIC_BASE_URL);

/** The document's bytes by the address and info it states: one deployment has one. */
const served = new Map<string, Buffer>();
function servedDocument(publicBaseUrl: string, info: DocumentInfo): Buffer {
  const key = JSON.stringify([publicBaseUrl, info]);
  let bytes = served.get(key);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(describeOperations(OPERATIONS, publicBaseUrl, info)), 'utf8');
    served.set(key, bytes);
  }
  return bytes;
}
