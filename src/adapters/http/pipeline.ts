import type { ServerResponse } from 'node:http';
import { setTimeout } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { AuthenticateKey } from '../../application/access/authenticate-key.js';
import type { CountOverlap } from '../../application/access/count-overlap.js';
import type { EnforceRateLimit } from '../../application/access/enforce-rate-limit.js';
import { UNMATCHED_ROUTE, type ServiceMetrics } from '../service-metrics.js';
import type { Principal } from '../../domain/api-key.js';
import { RateLimitExceeded } from '../../domain/errors.js';
import type { RateLimitStatus } from '../../domain/rate-limit.js';
import type { Answer, HeaderList } from './answer.js';
import { errorAnswer, errorAnswerFor } from './error-response.js';
import { failureLogOf } from './failure-log.js';
import { ALLOWED_METHODS, DEFAULT_DOCUMENT_INFO, deprecationHeaders, methodNotAllowedMessage, pathTemplate, pathWithoutParameter, type DocumentInfo, type Operation, type OperationRequest } from './operation.js';
import { putRateLimitHeaders, RATE_LIMIT_HEADER_COUNT } from './rate-limit-headers.js';
import { countRefusal } from './refusal-metrics.js';
import { requestIdFrom } from './request-id.js';
import { loggablePath, requestLogOf, type RequestLine } from './request-log.js';
import { SandboxRateLimitAsked } from './sandbox-answers.js';
import { apiSecurityHeaders, helmetHeaders, DOCS_HELMET_OPTIONS } from './security-headers.js';
import { traceIdOf } from '../tracing/trace-context.js';
import { runIn, SPAN_FAILED, tracedUnder, tracing } from '../tracing/tracing.js';
import type { Span } from '@opentelemetry/api';
import { TurnWrites } from './turn-writes.js';

/** What the request pipeline needs besides the operations' use cases. */
export interface PipelineDependencies<UseCases> {
  readonly useCases: UseCases;
  readonly authenticateKey: AuthenticateKey;
  readonly enforceRateLimit: EnforceRateLimit;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  /** Where counting is a round trip and changes are watched: lets an operation that may read before its count start at once. */
  readonly overlap?: CountOverlap | undefined;
}

/** A request as it reaches the pipeline, from Koa or from the fast path. */
export interface PipelineRequest extends OperationRequest {
  /** The path as sent, without its query: for the log line. */
  readonly path: string;
  /** Where the request comes from, for counting failed authentications. */
  readonly clientAddress: string;
}

/** Where a request was routed: an operation, a known path with another method, or nowhere. */
export type Route<UseCases> =
  | { readonly kind: 'operation'; readonly operation: Operation<UseCases> }
  | { readonly kind: 'method_not_allowed'; readonly template: string }
  | { readonly kind: 'not_found' };

/** One request through the service, framework-free, answered on node:http's response. */
export interface Pipeline<UseCases> {
  /** The API's address as partners reach it, which the routers hand every operation. */
  readonly publicBaseUrl: string;
  /** What the OpenAPI document states of the deployment, which the routers hand every operation. */
  readonly documentInfo: DocumentInfo;
  /**
   * Answers the request (checks, operation, errors) on `res`, then logs it and counts it. The answer
   * is written at the end of the loop turn in which it was made, with the other answers of that turn.
   */
  respond(route: Route<UseCases>, request: PipelineRequest, res: ServerResponse): Promise<void>;
}

/**
 * The one request pipeline: request ID, security headers, key, rate limit, the operation (its input,
 * use case and answer), the error answer of whatever refused it, the log line and the metrics. Koa's
 * routes and the fast path both hand their requests here, so the two answer alike by construction.
 */
export function createPipeline<UseCases>(
  deps: PipelineDependencies<UseCases>, operations: readonly Operation<UseCases>[], publicBaseUrl: string, documentInfo: DocumentInfo = DEFAULT_DOCUMENT_INFO,
): Pipeline<UseCases> {
  const security = { api: apiSecurityHeaders(publicBaseUrl), docs: helmetHeaders(DOCS_HELMET_OPTIONS) };
  // Below a docs operation's path, even a path no operation serves is answered with the docs' headers.
  const docsPaths = operations.filter((operation) => operation.headers === 'docs').map(({ path }) => pathWithoutParameter(path));
  const isDocsPath = (path: string): boolean => docsPaths.some((docs) => path === docs || path.startsWith(`${docs}/`));
  const failures = failureLogOf(deps.logger);
  const log = requestLogOf(deps.logger);
  // Each answer is written at the end of its loop turn, then logged and counted with its time to that write.
  const writes = new TurnWrites<PendingAnswer>((pending) => {
    writeAnswer(pending.res, pending.method, pending.status, pending.headers, pending.body);
    pending.ms = performance.now() - pending.started;
    if (pending.span !== undefined) endServerSpan(pending.span, pending.status);
    log(pending);
    deps.metrics.observeRequest(pending.label, pending.status, pending.ms / 1000, pending.principal?.mode ?? 'live');
  }, (error, pending) => {
    // An answer that could not be written ends its connection; one already written is left to finish.
    if (!pending.res.writableEnded) pending.res.destroy();
    runIn(pending.span, () => failures.unexpected(error, pending.requestId));
    pending.span?.end();
  });
  // What each operation's answers carry and are counted under, worked out once.
  // A deprecated operation's announcement rides with its security headers: made once, written on every answer.
  const byOperation = new Map(operations.map((operation) => {
    const own = operation.headers === 'docs' ? security.docs : security.api;
    const { deprecation } = operation;
    return [operation, { label: pathTemplate(operation.path).route, security: deprecation === undefined ? own : [...own, ...deprecationHeaders(operation.operationId, deprecation)] }];
  }));
  const ofRoute = (route: Route<UseCases>, path: string): { label: string; security: HeaderList } => {
    if (route.kind === 'operation') return byOperation.get(route.operation)!;
    return { label: route.kind === 'method_not_allowed' ? route.template : UNMATCHED_ROUTE, security: isDocsPath(path) ? security.docs : security.api };
  };

  const unmatched = (route: Exclude<Route<UseCases>, { kind: 'operation' }>, request: PipelineRequest): Answer =>
    route.kind === 'not_found'
      ? errorAnswer('not_found', 'No such endpoint.')
      : errorAnswer('method_not_allowed', methodNotAllowedMessage(request.method), ['Allow', ALLOWED_METHODS]);

  return {
    publicBaseUrl,
    documentInfo,
    respond(route, request, res) {
      const on = tracing();
      if (on === undefined) return respondWithin(route, request, res, undefined);
      // A valid traceparent is continued; a malformed one is ignored, as the recommendation says.
      const traceparent = request.header('traceparent');
      const continued = traceIdOf(traceparent) === undefined ? undefined : traceparent;
      const parent = on.sampleServer(continued, continued === undefined ? undefined : request.header('tracestate'));
      // A request the sampler does not keep has no span: it is answered as with tracing off.
      if (parent === undefined) return respondWithin(route, request, res, undefined);
      const { label } = ofRoute(route, request.path);
      const span = on.startServer(`${request.method} ${label}`, parent, {
        'http.request.method': request.method, 'http.route': label, 'url.path': loggablePath(request.path),
      });
      return respondWithin(route, request, res, span);
    },
  };

  /**
   * The request answered; with a span (a traced request), each step runs in it (`runIn`), so what
   * the step starts or gathers (the count, the cache, the read) is drawn below it or linked to it.
   */
  async function respondWithin(route: Route<UseCases>, request: PipelineRequest, res: ServerResponse, span: Span | undefined): Promise<void> {
    const started = performance.now();
    const requestId = requestIdFrom(request.header('x-request-id'));
    const { label, security: own } = ofRoute(route, request.path);
    let principal: Principal | undefined;
    let rateLimit: RateLimitStatus | undefined;
    let answer: Answer | undefined;
    try {
      if (route.kind !== 'operation') {
        answer = unmatched(route, request);
      } else {
        const { operation } = route;
        if (operation.key) {
          // Check order (docs/api.md): the key, then the rate limit, then the operation's own work.
          const presented = { authorization: request.header('authorization'), apiKey: request.header('x-api-key'), clientAddress: request.clientAddress };
          principal = span === undefined ? await deps.authenticateKey.execute(presented) : await tracedUnder(span, 'key check', {}, () => deps.authenticateKey.execute(presented));
          span?.setAttributes({ 'pcat.partner.id': principal.partnerId, 'pcat.key.id': principal.keyId, 'pcat.key.mode': principal.mode });
          const mark = operation.readsBeforeCount === true ? deps.overlap?.start(principal) : undefined;
          // Started now, awaited only once the count allows an answer: a refusal drops it unread.
          const early = mark === undefined ? undefined : startEarly(() => runIn(span, () => operation.answer(deps.useCases, request, principal)));
          // Every answer after the key was counted, a refusal too, says how much of the window is left.
          const counted = principal;
          rateLimit = await (span === undefined ? deps.enforceRateLimit.execute(counted) : runIn(span, () => deps.enforceRateLimit.execute(counted)));
          if (early !== undefined && deps.overlap!.stands(principal, mark!)) answer = await early;
        }
        if (answer === undefined) {
          const answered = span === undefined ? operation.answer(deps.useCases, request, principal) : runIn(span, () => operation.answer(deps.useCases, request, principal));
          answer = answered instanceof Promise ? await answered : answered;
        }
      }
    } catch (thrown) {
      // Counted as what it is: a refusal a test key asked for is no rejection by the limit.
      countRefusal(deps.metrics, thrown);
      let error = thrown;
      if (error instanceof SandboxRateLimitAsked && rateLimit !== undefined) {
        // Refused as the count refuses a spent window, with the key's own window's figures, which ride with the refusal.
        error = new RateLimitExceeded({ ...rateLimit, allowed: false, remaining: 0 });
        rateLimit = undefined;
      }
      const problem = errorAnswerFor(error);
      // Written within the request's span (when traced), so the line carries its ids.
      if (!problem.expected) runIn(span, () => failures.unexpected(error, requestId));
      if (problem.delayMs > 0) await setTimeout(problem.delayMs);
      answer = problem.answer;
    }
    // Whom to tell before it goes: every call of a deprecated operation, by the partner its key named.
    if (route.kind === 'operation' && route.operation.deprecation !== undefined) deps.metrics.deprecatedOperationCalled(route.operation.operationId, principal?.partnerId);
    span?.setAttribute('pcat.request.id', requestId);
    const ids = span?.spanContext();
    writes.add({
      res, headers: headerList(requestId, own, rateLimit, answer.headers), body: answer.body, started, label,
      requestId, traceId: ids === undefined ? traceIdOf(request.header('traceparent')) : ids.traceId, spanId: ids?.spanId,
      method: request.method, path: request.path, status: answer.status, ms: 0, principal, span,
    });
  }
}

/** An answer waiting for the end of its loop turn, with its log line (`ms` set once written) and what it is counted under. */
interface PendingAnswer extends RequestLine {
  readonly res: ServerResponse;
  /** The request's server span while tracing is on: ended once the answer is written. */
  readonly span: Span | undefined;
  readonly method: string;
  readonly headers: string[];
  readonly body: Buffer | undefined;
  /** When the request arrived (`performance.now()`). */
  readonly started: number;
  /** The route it is counted under in the metrics. */
  readonly label: string;
  ms: number;
}

/** A request's server span ended with its answer's status; a 5xx marks it failed. */
function endServerSpan(span: Span, status: number): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: SPAN_FAILED });
  }
  span.end();
}

/**
 * An operation started before its request's count: its failure is held until awaited (a refusal by
 * the count drops it, unread and unreported), and one thrown at once leaves it to be run after the count.
 */
function startEarly(run: () => Promise<Answer> | Answer): Promise<Answer> | Answer | undefined {
  try {
    const answered = run();
    if (answered instanceof Promise) answered.catch(() => undefined);
    return answered;
  } catch {
    return undefined;
  }
}

/**
 * An answer's headers in the order they are written: its request ID, its security headers, the rate
 * limit's fields once the key was counted, then the answer's own. One list made at its final length:
 * a list grown by appending was copied twice over as it grew.
 */
function headerList(requestId: string, security: HeaderList, rateLimit: RateLimitStatus | undefined, own: HeaderList): string[] {
  const headers = new Array<string>(2 + security.length + (rateLimit === undefined ? 0 : RATE_LIMIT_HEADER_COUNT) + own.length);
  headers[0] = 'X-Request-Id';
  headers[1] = requestId;
  let at = 2;
  for (let i = 0; i < security.length; i += 1) headers[at++] = security[i]!;
  if (rateLimit !== undefined) {
    putRateLimitHeaders(headers, at, rateLimit);
    at += RATE_LIMIT_HEADER_COUNT;
  }
  for (let i = 0; i < own.length; i += 1) headers[at++] = own[i]!;
  return headers;
}

/** Writes an answer on node:http's response; HEAD gets the headers alone. */
function writeAnswer(res: ServerResponse, method: string, status: number, headers: string[], body: Buffer | undefined): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  res.writeHead(status, headers).end(method === 'HEAD' ? undefined : body);
}
