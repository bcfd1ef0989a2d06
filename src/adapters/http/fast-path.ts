import type { IncomingMessage, ServerResponse } from 'node:http';
import { peerAddress, type ClientAddressOf } from '../listening/client-address.js';
import { headerValue } from './app.js';
import { pathTemplate, type DocumentInfo, type Operation } from './operation.js';
import { type Pipeline, type PipelineRequest, type Route } from './pipeline.js';
import { readQuery, type QueryParameters } from './query-parameters.js';

/** Answers the request and returns true, or returns false having touched nothing. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const NO_PARAMS: Record<string, string> = {};

/** Segments that need no percent-decoding and that the router would match as they are. */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]{1,200}$/;

interface Match<UseCases> {
  readonly route: Route<UseCases>;
  /** The trailing parameter's name, for an operation whose path ends in one. */
  readonly parameter?: string;
}

/** A plain request as the pipeline reads it; methods on a prototype, so a request costs one object. */
class PlainRequest implements PipelineRequest {
  private parsedQuery: QueryParameters | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly url: string,
    readonly path: string,
    readonly params: Readonly<Record<string, string>>,
    readonly clientAddress: string,
    readonly publicBaseUrl: string,
    readonly documentInfo: DocumentInfo,
  ) {}

  get method(): string {
    return this.req.method ?? 'GET';
  }

  header(name: string): string | undefined {
    return headerValue(this.req, name);
  }

  query(name: string): string | string[] | undefined {
    this.parsedQuery ??= readQuery(this.url);
    return this.parsedQuery[name];
  }
}

/**
 * The operations' plain requests, routed without Koa's middleware chain: an exact path, or a path
 * whose one trailing parameter is a plain segment, by GET or HEAD. The request goes to the same
 * pipeline as Koa's routes; anything unusual (another method, an encoded or empty segment) is left to Koa.
 */
export function createFastPath<UseCases>(
  operations: readonly Operation<UseCases>[], pipeline: Pipeline<UseCases>, clientAddress: ClientAddressOf = peerAddress,
): FastPath {
  const exact = new Map<string, Match<UseCases>>();
  const prefixes: { prefix: string; match: Match<UseCases> }[] = [];
  for (const operation of operations) {
    const { parameter } = pathTemplate(operation.path);
    const route = { kind: 'operation', operation } as const;
    if (parameter !== null) prefixes.push({ prefix: parameter.prefix, match: { route, parameter: parameter.name } });
    else exact.set(operation.path, { route });
  }

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    let match = exact.get(path);
    let params: Record<string, string> = NO_PARAMS;
    if (match === undefined) {
      let found: { prefix: string; match: Match<UseCases> } | undefined;
      for (const candidate of prefixes) {
        if (path.startsWith(candidate.prefix)) {
          found = candidate;
          break;
        }
      }
      if (found === undefined) return false;
      const segment = path.slice(found.prefix.length);
      if (!PLAIN_SEGMENT.test(segment)) return false;
      match = found.match;
      params = { [match.parameter!]: segment };
    }
    const request = new PlainRequest(req, url, path, params, clientAddress(req), pipeline.publicBaseUrl, pipeline.documentInfo);
    void pipeline.respond(match.route, request, res);
    return true;
  };
}
