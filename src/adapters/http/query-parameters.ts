import { parse } from 'node:querystring';
import { DomainError, type DomainErrorCode } from '../../domain/errors.js';

/** Most parameters an operation reads from one query string; one more and the query is refused, never read in part. */
export const MAX_QUERY_PARAMETERS = 100;

/** A query string's parameters by name: a value, or every value of a name given more than once. */
export type QueryParameters = Readonly<Record<string, string | string[] | undefined>>;

const NO_PARAMETERS: QueryParameters = Object.freeze(Object.create(null) as Record<string, string>);

/**
 * The query of a request target (what follows its first `?`), read whole, for every operation that
 * reads one, whichever router took the request. node:querystring alone stops at the 1,000th pair and
 * drops the rest without a word, a `cursor` among them; so the parameters are counted first, and a
 * query of more than MAX_QUERY_PARAMETERS is refused with 400 `invalid_query`. Empty pieces (`a=1&&b=2`,
 * a trailing `&`) carry nothing and are not counted.
 */
export function readQuery(target: string): QueryParameters {
  const mark = target.indexOf('?');
  if (mark === -1) return NO_PARAMETERS;
  const query = target.slice(mark + 1);
  const count = parameterCount(query);
  if (count > MAX_QUERY_PARAMETERS) {
    throw new DomainError('invalid_query', `The query string has ${count} parameters; send at most ${MAX_QUERY_PARAMETERS}.`);
  }
  return parse(query, '&', '=', { maxKeys: 0 });
}

/** The non-empty `&`-separated pieces of a query. */
function parameterCount(query: string): number {
  let count = 0;
  let start = 0;
  for (;;) {
    const end = query.indexOf('&', start);
    const stop = end === -1 ? query.length : end;
    if (stop > start) count += 1;
    if (end === -1) return count;
    start = end + 1;
  }
}

/**
 * A query parameter an operation reads one value of: absent, or given once. Given twice it names no
 * one value, and is refused with the code of a bad value of it.
 */
export function singleQueryValue(value: string | string[] | undefined, code: DomainErrorCode, name: string): string | undefined {
  if (!Array.isArray(value)) return value;
  throw new DomainError(code, `Send ${name} once; it was sent ${value.length} times.`);
}
