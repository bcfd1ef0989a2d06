import type { TSchema } from 'typebox';
import type { Principal } from '../../domain/api-key.js';
import type { DomainErrorCode } from '../../domain/errors.js';
import type { Answer } from './answer.js';

/** A request as an operation sees it, whichever adapter received it. */
export interface OperationRequest {
  readonly method: string;
  /** The path's parameters, percent-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** A query parameter: absent, given once, or given several times. */
  query(name: string): string | string[] | undefined;
  /** A request header, by its lower-case name; absent or empty is undefined. */
  header(name: string): string | undefined;
  /** The API's address as partners reach it (PUBLIC_BASE_URL). */
  readonly publicBaseUrl: string;
  /** Whom partners contact, and the terms they use the API under, as the OpenAPI document states them. */
  readonly documentInfo: DocumentInfo;
}

/** What the OpenAPI document's `info` says of the deployment (OPENAPI_CONTACT_NAME, _EMAIL, _URL, OPENAPI_TERMS_URL). */
export interface DocumentInfo {
  readonly contact: { readonly name: string; readonly email?: string; readonly url?: string };
  /** Where the partner agreement is; without it the document's licence points at its own docs page. */
  readonly termsUrl?: string;
}

/** The document's `info` when nothing is configured. */
export const DEFAULT_DOCUMENT_INFO: DocumentInfo = { contact: { name: 'API support' } };

/** An operation's own error code: when it is answered, and an example of its message, for the OpenAPI document. */
export interface OperationError {
  readonly when: string;
  readonly example: string;
}

/** A path or query parameter: its TypeBox schema is what the OpenAPI document states. */
export interface OperationParameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  readonly description: string;
  readonly schema: TSchema | Readonly<Record<string, unknown>>;
  readonly example?: string | number | readonly (string | number)[];
  /** How a list is written: `form` without `explode` is one parameter of comma-separated values. */
  readonly style?: 'form';
  readonly explode?: boolean;
}

/**
 * An operation that is going away (docs/versioning.md). Each of its answers says so in headers, the
 * OpenAPI document marks it, and its calls are counted by partner.
 */
export interface Deprecation {
  /** When it was deprecated: the `Deprecation` header, `@<unix seconds>` (RFC 9745). */
  readonly since: Date;
  /** When it stops being served, once decided: the `Sunset` header, an HTTP-date (RFC 8594); after `since`. */
  readonly sunset?: Date;
  /** An absolute https URL of the page that says what replaces it: the `Link` header's `rel="deprecation"`. */
  readonly link: string;
}

/**
 * One operation of the service, declared once: the Koa routes, the fast path's matcher, the OpenAPI
 * `paths`, the metrics' route labels and the 405's `Allow` all come from this declaration.
 */
export interface Operation<UseCases> {
  readonly operationId: string;
  /** The path in OpenAPI's template form, `{name}` for a parameter; only GET (and HEAD) are served. */
  readonly path: string;
  readonly tag: 'Lookup' | 'Changes' | 'Service';
  readonly summary: string;
  readonly description: string;
  /** Needs an API key, and counts against the key's rate limit. */
  readonly key: boolean;
  /** The path with its trailing parameter left out (`/sku`, `/sku/`) is this operation with an empty value, unless another operation's path. */
  readonly emptyParameterPaths?: boolean;
  readonly parameters?: readonly OperationParameter[];
  /** The operation's own error codes; a keyed operation also answers the key's, the rate limit's, 500 and 503. */
  readonly errors?: Readonly<Partial<Record<DomainErrorCode, OperationError>>>;
  /** The answers besides the errors, as OpenAPI response objects by status. */
  readonly responses: Readonly<Record<number, unknown>>;
  /** The security headers of its answers: the API's, or the docs' (which must render over plain HTTP). */
  readonly headers?: 'api' | 'docs';
  /**
   * Only reads the caller's catalog, so it may start while its request's count is under way (where
   * counting is a round trip): the count still decides whether it is answered, and it is run again
   * when the count shows the catalog changed meanwhile.
   */
  readonly readsBeforeCount?: boolean;
  /** Marks the operation deprecated: its answers announce it, and the document marks it. */
  readonly deprecation?: Deprecation;
  /** Runs the operation; throws a DomainError to refuse. */
  answer(useCases: UseCases, request: OperationRequest, principal: Principal | undefined): Promise<Answer> | Answer;
}

/**
 * An operation's path, read once: the routers, the fast path, the metrics' labels, the empty-parameter
 * paths and the docs' headers all take its parts from here. A path has at most one parameter, and
 * only as its last segment (`/v1/sku/{sku}`).
 */
export interface PathTemplate {
  /** The path as the router and the metrics' labels write it: `{sku}` becomes `:sku`. */
  readonly route: string;
  /** The trailing parameter's name and the path before it, its slash included; null for a path without one. */
  readonly parameter: { readonly name: string; readonly prefix: string } | null;
}

const TRAILING_PARAMETER = /^([^{}]*\/)\{([^{}/]+)\}$/;

export function pathTemplate(path: string): PathTemplate {
  const trailing = TRAILING_PARAMETER.exec(path);
  if (trailing === null) {
    if (/[{}]/.test(path)) throw new Error(`operation path ${path}: a parameter may only be the last segment, and only one`);
    return { route: path, parameter: null };
  }
  const prefix = trailing[1]!;
  const name = trailing[2]!;
  return { route: `${prefix}:${name}`, parameter: { name, prefix } };
}

/** The path with its trailing parameter and that parameter's slash left out (`/docs/{asset}` is `/docs`); the path itself without one. */
export function pathWithoutParameter(path: string): string {
  const { parameter } = pathTemplate(path);
  return parameter === null ? path : parameter.prefix.slice(0, -1);
}

/** The paths that stand for an operation with an empty trailing parameter: the prefix with and without its slash, but a path another operation serves. */
export function emptyParameterPaths(operation: Operation<unknown>, operations: readonly Operation<unknown>[]): string[] {
  if (operation.emptyParameterPaths !== true) return [];
  const prefix = pathWithoutParameter(operation.path);
  return [prefix, `${prefix}/`].filter((path) => !operations.some((other) => other.path === path));
}

/** The API's address when PUBLIC_BASE_URL is not set and HOST and PORT are their defaults. */
export const DEFAULT_PUBLIC_BASE_URL = 'http://127.0.0.1:3000';

/** The methods every operation's path accepts, as `Allow` lists them. */
export const ALLOWED_METHODS = 'GET, HEAD';

/** The 405's message for another method on an operation's path. */
export function methodNotAllowedMessage(method: string): string {
  return `Method ${method} is not allowed here; use GET or HEAD.`;
}

/**
 * The headers every answer of a deprecated operation carries: `Deprecation`, `Sunset` when set,
 * and the `Link` to what replaces it. A declaration that could not be announced as written (a
 * sunset not after the date, a link that is not an absolute https URL) is a mistake in the table,
 * and stops the start.
 */
export function deprecationHeaders(operationId: string, deprecation: Deprecation): string[] {
  const { since, sunset, link } = deprecation;
  if (Number.isNaN(since.getTime())) throw new Error(`${operationId}: its deprecation date is not a date`);
  if (sunset !== undefined && !(sunset.getTime() > since.getTime())) throw new Error(`${operationId}: its sunset must come after its deprecation date`);
  if (!URL.canParse(link) || new URL(link).protocol !== 'https:' || /[<>\s]/.test(link)) throw new Error(`${operationId}: its deprecation link must be an absolute https URL`);
  return [
    'Deprecation', `@${Math.floor(since.getTime() / 1_000)}`,
    ...(sunset === undefined ? [] : ['Sunset', sunset.toUTCString()]),
    'Link', `<${link}>; rel="deprecation"; type="text/html"`,
  ];
}
