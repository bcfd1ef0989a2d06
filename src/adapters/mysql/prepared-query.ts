import type { Compilable, Kysely } from 'kysely';
import type { Database } from './database.js';
import { prepareOnServer } from './bounded-pool.js';

/**
 * A query built and compiled once, from placeholder values, then run with real ones. On the
 * request path Kysely's builder and compiler cost a noticeable share of the CPU a lookup takes
 * (profiled under load), for SQL that never changes. Each placeholder must be a value of its own
 * that appears exactly once among the compiled parameters, so each real value lands in its place.
 */
export function prepareQuery<Row, Values extends readonly unknown[]>(
  db: Kysely<Database>,
  build: (...values: Values) => Compilable<Row>,
  placeholders: Values,
  options: { readonly onServer?: boolean } = {},
): (...values: Values) => Promise<Row[]> {
  const compiled = build(...placeholders).compile();
  const positions = placeholders.map((placeholder) => compiled.parameters.indexOf(placeholder));
  if (
    compiled.parameters.length !== placeholders.length ||
    positions.some((position) => position < 0) ||
    new Set(positions).size !== positions.length
  ) {
    throw new Error(`prepared query: each placeholder must appear once among the parameters of ${compiled.sql}`);
  }
  // A server-side prepared statement: the values travel apart from the SQL text, which holds `?`.
  if (options.onServer === true) prepareOnServer(compiled.sql);
  return async (...values) => {
    const parameters: unknown[] = [];
    positions.forEach((position, i) => {
      parameters[position] = values[i];
    });
    return (await db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}

/**
 * A list of values fitted to the smallest of `sizes` (ascending) that holds it, filled up with its own
 * last value: statements prepared for a few list lengths then serve every length, and a few values
 * cost a few placeholders. The list must be no longer than the largest size.
 */
export function fitToSize<V>(values: readonly V[], sizes: readonly number[]): { readonly size: number; readonly padded: readonly V[] } {
  const size = sizes.find((candidate) => candidate >= values.length)!;
  const padded = values.length === size ? values : [...values, ...Array<V>(size - values.length).fill(values.at(-1)!)];
  return { size, padded };
}
