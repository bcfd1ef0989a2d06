import { Type, type TSchema } from 'typebox';
import { ChangesResponseSchema, ChangeViewSchema } from '../../domain/changes-view.js';
import { TIMEOUTS } from '../timeouts.js';
import { ErrorBodySchema, InvalidApiKey, ServiceUnavailable } from '../../domain/errors.js';
import { VideoObjectJsonLdSchema } from '../../domain/json-ld.js';
import { LookupBatchResponseSchema } from '../../domain/lookup-batch.js';
import { LookupResultSchema, PdpEntryViewSchema, ProductViewSchema, VideoViewSchema } from '../../domain/lookup-result.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, RATE_LIMIT_WINDOW_SECONDS } from '../../domain/rate-limit.js';
import { ERROR_CACHE_CONTROL, STATUS_BY_CODE, type ApiErrorCode } from './error-response.js';
import { LOOKUP_CACHE_CONTROL, LOOKUP_VARY } from './lookup-response.js';
import { ALLOWED_METHODS, DEFAULT_DOCUMENT_INFO, emptyParameterPaths, methodNotAllowedMessage, type Deprecation, type DocumentInfo, type Operation, type OperationError } from './operation.js';

/*
 * The OpenAPI 3.1 description of everything the HTTP app serves, derived from the operations'
 * declarations. The test suite validates every response it sees against it, so an answer that
 * strays from its operation's declaration fails the tests.
 */

export const header = (description: string, schema: Record<string, unknown>, required = true) => ({ description, required, schema });

export const REQUEST_ID = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
export const RATE_LIMIT = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
  RateLimit: { $ref: '#/components/headers/RateLimit' },
};

/** The draft's two fields: a quoted policy name, then its parameters. */
const POLICY_PATTERN = '^"default";q=[1-9][0-9]*;w=[1-9][0-9]*$';
const RATE_LIMIT_PATTERN = '^"default";r=[0-9]+;t=[1-9][0-9]*$';
/** The RateLimit-* headers where an answer may come before any key was counted. */
const optionalRateLimit = (limitDescription: string) => ({
  'RateLimit-Limit': header(limitDescription, { type: 'integer', minimum: 1 }, false),
  'RateLimit-Remaining': header('See RateLimit-Limit.', { type: 'integer', minimum: 0 }, false),
  'RateLimit-Reset': header('See RateLimit-Limit.', { type: 'integer', minimum: 1 }, false),
  'RateLimit-Policy': header('See RateLimit-Limit.', { type: 'string', pattern: POLICY_PATTERN }, false),
  RateLimit: header('See RateLimit-Limit.', { type: 'string', pattern: RATE_LIMIT_PATTERN }, false),
});
const ERROR_CACHING = { 'Cache-Control': header('Errors are never cached.', { type: 'string', const: ERROR_CACHE_CONTROL }) };

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
  { method_not_allowed: methodNotAllowedMessage('POST') },
  { ...REQUEST_ID, Allow: header('The methods the path accepts.', { type: 'string', const: ALLOWED_METHODS }) },
);

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

const KEYED = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/**
 * What the listener answers a request to any operation before the operation sees it (docs/api.md,
 * order of checks): the request as a whole, not its key or its input, is at fault. The listener
 * writes these itself, with `X-Request-Id` and no rate-limit headers, and closes the connection.
 */
export const LISTENER_ERRORS: Readonly<Partial<Record<ApiErrorCode, OperationError>>> = {
  bad_request: {
    when: 'A request the server cannot read as HTTP/1.1 (an HTTP/1.1 request without `Host`, two `Host` headers, a malformed request line or header): answered before anything else, and the connection is closed.',
    example: 'Malformed HTTP request: more than one Host header.',
  },
  request_timeout: {
    when: `The request's headers took more than ${TIMEOUTS.httpHeadersMs / 1000} s to arrive, or the whole request more than ${TIMEOUTS.httpRequestMs / 1000} s; the connection is closed.`,
    example: `The request did not arrive in time: its headers within ${TIMEOUTS.httpHeadersMs / 1000} s, the whole request within ${TIMEOUTS.httpRequestMs / 1000} s.`,
  },
};

/** An operation's own errors and the listener's as responses, one per status, each listing its codes. */
function errorResponses(operation: Operation<unknown>): Record<number, unknown> {
  const byStatus = new Map<number, [ApiErrorCode, OperationError][]>();
  const errors = [...Object.entries(operation.errors ?? {}), ...Object.entries(LISTENER_ERRORS)] as [ApiErrorCode, OperationError][];
  for (const [code, error] of errors) {
    const status = STATUS_BY_CODE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), [code, error]]);
  }
  // The listener's answers come before the key is counted: where one shares a status with the operation's, the rate-limit headers are optional.
  const headersOf = (codes: readonly ApiErrorCode[]) => {
    if (!operation.key) return REQUEST_ID;
    if (codes.some((code) => code in LISTENER_ERRORS)) return { ...REQUEST_ID, ...optionalRateLimit('Requests allowed per window for this key; absent on the listener\'s own answers (`bad_request`, `request_timeout`).') };
    return { ...REQUEST_ID, ...RATE_LIMIT };
  };
  return Object.fromEntries([...byStatus].map(([status, listed]) => [
    status,
    errorResponse(listed.map(([, error]) => error.when).join(' '), Object.fromEntries(listed.map(([code, error]) => [code, error.example])), headersOf(listed.map(([code]) => code))),
  ]));
}

/** What the document says of a deprecated operation, as its answers' headers do. */
function deprecationNote({ since, sunset, link }: Deprecation): string {
  const day = (date: Date): string => date.toISOString().slice(0, 10);
  return `**Deprecated since ${day(since)}**${sunset === undefined ? '' : `; served until ${day(sunset)}`}. ` +
    `Its answers carry \`Deprecation\`${sunset === undefined ? '' : ', `Sunset`'} and a \`Link\` to [what replaces it](${link}).`;
}

/** An operation as the document's path item: GET, and HEAD, which answers alike without a body. */
function pathItem(operation: Operation<unknown>, operations: readonly Operation<unknown>[]): Record<string, unknown> {
  const aliases = emptyParameterPaths(operation, operations);
  const get = {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    description: operation.deprecation === undefined ? operation.description : `${operation.description}\n\n${deprecationNote(operation.deprecation)}`,
    security: operation.key ? KEYED : [],
    ...(operation.deprecation === undefined ? {} : { deprecated: true }),
    ...(operation.parameters === undefined ? {} : { parameters: operation.parameters.map((parameter) => plain(parameter)) }),
    responses: {
      ...operation.responses,
      ...errorResponses(operation),
      ...(operation.key ? { 401: unauthorized, 429: rateLimited, 500: internalError, 503: serviceUnavailable } : {}),
    } as Record<string, Record<string, unknown>>,
  };
  return {
    // Routes that stand for this path with an empty parameter: they answer the parameter's 400.
    ...(aliases.length === 0 ? {} : { 'x-empty-parameter-paths': aliases }),
    get,
    head: {
      ...get,
      operationId: get.operationId.replace(/^get/, 'head'),
      summary: `${get.summary} (headers only)`,
      description: 'The GET\'s answer without its body: the same status and headers, `Content-Length` included.',
      responses: Object.fromEntries(Object.entries(get.responses).map(([status, response]) => [status, answeredUnread(status) ? response : withoutBody(response)])),
    },
  };
}

/**
 * Whether the listener gives this status before Node has parsed the request, so without knowing it
 * was HEAD: a timed-out request's 408 carries its body whatever the method.
 */
const answeredUnread = (status: string): boolean => Number(status) === STATUS_BY_CODE.request_timeout;

/** A response as HEAD gets it: its headers, no content. */
function withoutBody(response: Record<string, unknown>): Record<string, unknown> {
  if ('$ref' in response) return { description: 'Any path this document does not describe.', headers: REQUEST_ID };
  return Object.fromEntries(Object.entries(response).filter(([key]) => key !== 'content'));
}

/** A declaration in plain JSON: TypeBox's own marks on a schema are not the document's. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** The OpenAPI 3.1 document of the given operations, served at `serverUrl` by a deployment that `info` describes. */
export const describeOperations = (operations: readonly Operation<unknown>[], serverUrl: string, info: DocumentInfo = DEFAULT_DOCUMENT_INFO) => ({
  openapi: '3.1.0',
  info: {
    title: 'Partner Catalog Lookup API',
    version: '1.0.0',
    summary: 'Read-only, partner-scoped product content, videos and schema.org VideoObject JSON-LD.',
    contact: info.contact,
    // Partners use the API under their agreement with the operator: where it is, or else this page, whose introduction says so.
    license: { name: 'Partner agreement', url: info.termsUrl ?? `${serverUrl}/docs` },
    ...(info.termsUrl === undefined ? {} : { termsOfService: info.termsUrl }),
    description: [
      'Look a product up by your own SKU or by its numeric ID, or up to 100 in one request (`getProducts`), and get its marketing copy, its published videos and its retailer product-page (PDP) entries, each with a schema.org `VideoObject` (`json_ld`) to embed on that page.',
      '',
      '**Keys.** Send `Authorization: Bearer <key>` or `X-API-Key: <key>`; a non-blank `Authorization` always wins. Keys are never read from the query string. Call the API from server-side code only.',
      '',
      '**Check order.** Routing (404 `not_found` for any other path, 405 `method_not_allowed` with `Allow: ' + ALLOWED_METHODS + '` for another method on a known path), then the key (401), the rate limit (429), the input (400) and the lookup (404) or the feed (410). `HEAD` answers like `GET` without a body.',
      '',
      '**Keeping a copy current.** `getChanges` lists what changed in your catalog since a cursor: read it daily, then look up only the products it lists.',
      '',
      `**Rate limit.** Each key may make a set number of requests in a fixed ${RATE_LIMIT_WINDOW_SECONDS}-second window that starts with the key's first request: ${DEFAULT_RATE_LIMIT_PER_MINUTE} unless the service's operator set another figure, which \`RateLimit-Limit\` states. Every authenticated answer carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`, and the same numbers in the current IETF draft's fields: \`RateLimit-Policy: "default";q=<limit>;w=${RATE_LIMIT_WINDOW_SECONDS}\` and \`RateLimit: "default";r=<remaining>;t=<seconds to reset>\`.`,
      '',
      '**Caching.** Every 200 lookup carries a strong `ETag`, `Cache-Control: ' + LOOKUP_CACHE_CONTROL + '` and `Vary: ' + LOOKUP_VARY + '`. Keep the body with its ETag (a daily cache is enough), and revalidate with `If-None-Match: <etag>`: 304 with no body means your copy is current. A revalidation counts against the rate limit like any request.',
      '',
      '**Embedding.** Embed only the `json_ld` of the entry whose `pdp_url` equals the page being rendered, in a script element of type `application/ld+json`, with `<`, `>`, `&`, U+2028 and U+2029 escaped as `\\uXXXX` so that no value can end the element. The client package\'s `jsonLdScriptFor` does exactly that.',
      '',
      '**Terms.** You use the API under your partner agreement with the operator of this service; `contact` says whom to ask.',
      '',
      '**Errors.** Every error is `{ "error": <code>, "message": <text> }` as `application/json`. Besides the codes of each operation: 404 `not_found` for any path not described here (`components/responses/UnknownPath`), 405 `method_not_allowed` with `Allow: ' + ALLOWED_METHODS + '` for another method on a described path.',
    ].join('\n'),
  },
  servers: [{ url: serverUrl, description: 'This service, as partners reach it' }],
  tags: [
    { name: 'Lookup', description: 'The public API; every request needs a key.' },
    { name: 'Changes', description: 'What changed in your catalog, to keep a copy current; every request needs a key.' },
    { name: 'Service', description: 'Operational endpoints and these docs; no key.' },
  ],
  security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  paths: Object.fromEntries(operations.map((operation) => [operation.path, pathItem(operation, operations)])),
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: '`Authorization: Bearer <key>`; the scheme name in any letter case. Keys are `pcat_live_` (live: your catalog) or `pcat_test_` (test: your sandbox) followed by 32 to 64 letters and digits.',
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
      'RateLimit-Policy': header('The key\'s policy as the IETF draft writes it: `"default";q=<requests per window>;w=<window in seconds>`.', { type: 'string', pattern: POLICY_PATTERN }),
      RateLimit: header('What is left as the IETF draft writes it: `"default";r=<requests left>;t=<seconds until the window ends>`.', { type: 'string', pattern: RATE_LIMIT_PATTERN }),
      'Retry-After': header('Whole seconds to wait before retrying.', { type: 'integer', minimum: 1, maximum: 60 }),
      ETag: header('Strong entity tag of the body.', { type: 'string', pattern: '^"[\\x21\\x23-\\x7e]*"$' }),
      'Cache-Control': header('Store privately, revalidate before each use.', { type: 'string', const: LOOKUP_CACHE_CONTROL }),
      Vary: header('The answer depends on the key.', { type: 'string', const: LOOKUP_VARY }),
    },
    responses: {
      UnknownPath: errorResponse('Any path this document does not describe.', { not_found: 'No such endpoint.' }, REQUEST_ID),
    },
    schemas: componentSchemas({
      LookupResponse: Type.Object({ data: LookupResultSchema }, { additionalProperties: false }),
      BatchLookupResponse: LookupBatchResponseSchema,
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
});
