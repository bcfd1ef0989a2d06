import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { DEFAULT_SITE, headerOf, type Site } from './app.js';
import type { Operation } from './operation.js';
import { writeAnswer, type Pipeline } from './pipeline.js';

/** Answers the request and returns true, or returns false having touched nothing. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** Segments that need no percent-decoding and that the router would match as they are. */
const PLAIN_SEGMENT = /^[A-Za-z0-9._~-]{1,200}$/;

interface Match<UseCases> {
  readonly operation: Operation<UseCases>;
  /** The trailing parameter's name, for an operation whose path ends in one. */
  readonly parameter?: string;
}

/**
 * The operations' plain requests, routed without Koa's middleware chain: an exact path, or a path
 * whose one trailing parameter is a plain segment, by GET or HEAD. The request goes to the same
 * pipeline as Koa's routes; anything unusual (another method, an encoded or empty segment) is left to Koa.
 */
export function createFastPath<UseCases>(operations: readonly Operation<UseCases>[], pipeline: Pipeline<UseCases>, site: Site = DEFAULT_SITE): FastPath {
  const { clientAddress, publicBaseUrl } = site;
  const exact = new Map<string, Match<UseCases>>();
  const prefixes: { prefix: string; match: Match<UseCases> }[] = [];
  for (const operation of operations) {
    const trailing = /^([^{}]*\/)\{([^}]+)\}$/.exec(operation.path);
    if (trailing !== null) prefixes.push({ prefix: trailing[1]!, match: { operation, parameter: trailing[2]! } });
    else if (!operation.path.includes('{')) exact.set(operation.path, { operation });
  }

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    let match = exact.get(path);
    let params: Record<string, string> = {};
    if (match === undefined) {
      const found = prefixes.find(({ prefix }) => path.startsWith(prefix));
      if (found === undefined) return false;
      const segment = path.slice(found.prefix.length);
      if (!PLAIN_SEGMENT.test(segment)) return false;
      match = found.match;
      params = { [match.parameter!]: segment };
    }
    let query: ReturnType<typeof parseQuery> | undefined;
    void pipeline.answer({ kind: 'operation', operation: match.operation }, {
      method: req.method,
      path,
      params,
      query: (name) => (query ??= mark === -1 ? {} : parseQuery(url.slice(mark + 1)))[name],
      header: headerOf(req),
      clientAddress: clientAddress(req),
      publicBaseUrl,
    }).then((answer) => writeAnswer(res, req.method, answer));
    return true;
  };
}
