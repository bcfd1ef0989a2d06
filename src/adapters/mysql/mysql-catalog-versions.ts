import type { Kysely } from 'kysely';
import type { CatalogVersions } from '../../application/instances/catalog-versions.js';
import type { Database } from './database.js';
import { fitToSize, prepareQuery } from './prepared-query.js';

/**
 * How many catalogs the statements take: a turn's list is sent in the smallest that holds it, filled
 * up with its own last value; a longer list in several of the largest.
 */
const LIST_SIZES = [1, 8, 64, 512] as const;

/** The version of a catalog with no row: one an import that stores it moves away from. */
const NOT_STORED = 'none';

interface Waiting {
  readonly resolve: (version: string) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A catalog's version is its changes-feed position (`partners.feed_seq`): every import that changes
 * a catalog's answers, or deletes one, moves it in the import's own transaction, and nothing else
 * changes an answer. The reads asked for in one turn of the event loop go at its end (setImmediate,
 * right after the poll phase that read the turn's requests) in one statement by primary key for all
 * their catalogs, each once: at most one statement a turn for up to 512 catalogs, whatever the
 * requests. Always on the primary (`db`): a replica may not have applied the change yet. A read
 * sent before a request arrived may have run before a change that committed since, so a turn never
 * joins another turn's statement.
 */
export class MysqlCatalogVersions implements CatalogVersions {
  private readonly statements: Map<number, (...ids: string[]) => Promise<{ id: string; feed_seq: number }[]>>;
  private gathered = new Map<string, Waiting[]>();

  constructor(db: Kysely<Database>) {
    this.statements = new Map(LIST_SIZES.map((size) => [size, prepareQuery(
      db,
      (...ids: string[]) => db.selectFrom('partners').select(['id', 'feed_seq']).where('id', 'in', ids),
      Array.from({ length: size }, (_, i) => `<catalog ${i}>`),
      { onServer: true },
    )]));
  }

  versionOf(catalogId: string): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.gathered.size === 0) setImmediate(this.readGathered);
      const waiting = this.gathered.get(catalogId);
      if (waiting === undefined) this.gathered.set(catalogId, [{ resolve, reject }]);
      else waiting.push({ resolve, reject });
    });
  }

  private readonly readGathered = (): void => {
    const gathered = this.gathered;
    this.gathered = new Map();
    const ids = [...gathered.keys()];
    const largest = LIST_SIZES.at(-1)!;
    for (let from = 0; from < ids.length; from += largest) this.read(ids.slice(from, from + largest), gathered);
  };

  private read(ids: readonly string[], gathered: Map<string, Waiting[]>): void {
    const { size, padded } = fitToSize(ids, LIST_SIZES);
    this.statements.get(size)!(...padded).then((rows) => {
      const versions = new Map<string, string>();
      for (const row of rows) versions.set(row.id, String(row.feed_seq));
      for (const id of ids) for (const waiting of gathered.get(id)!) waiting.resolve(versions.get(id) ?? NOT_STORED);
    }, (error: unknown) => {
      for (const id of ids) for (const waiting of gathered.get(id)!) waiting.reject(error);
    });
  }
}
