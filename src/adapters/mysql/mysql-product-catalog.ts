import type { SpanContext } from '@opentelemetry/api';
import { sql, type Kysely } from 'kysely';
import type { ProductCatalog } from '../../application/lookup/product-catalog.js';
import { LookupAnswer } from '../../domain/lookup-answer.js';
import { MAX_BATCH_VALUES } from '../../domain/lookup-batch.js';
import { LOOKUP_BODY_END, LOOKUP_BODY_START } from '../../domain/lookup-body.js';
import type { LookupResult } from '../../domain/lookup-result.js';
import type { ProductId } from '../../domain/product-id.js';
import type { Sku } from '../../domain/sku.js';
import type { Database } from './database.js';
import { activeSpan, endSpan, linkableContext, runIn, startSharedSpan, traced, tracing } from '../tracing/tracing.js';
import { fitToSize, prepareQuery } from './prepared-query.js';

type AnswerRow = { id: number; etag: string | null; body: Buffer | null };
type SkuRow = AnswerRow & { sku: string };
type Read<V, R> = (partnerId: string, ...values: V[]) => Promise<R[]>;

/**
 * How many values the statements of many lookups take: a list is sent in the smallest that holds it,
 * filled up with its own last value, so that a few values cost a few placeholders, not a hundred.
 */
const LIST_SIZES = [2, 4, 8, 16, 32, 64, MAX_BATCH_VALUES] as const;

/** The statements of many lookups, one for each of LIST_SIZES, built with distinct placeholders. */
function listStatements<V, R>(placeholder: (i: number) => V, prepare: (placeholders: V[]) => Read<V, R>): Map<number, Read<V, R>> {
  return new Map(LIST_SIZES.map((size) => [size, prepare(Array.from({ length: size }, (_, i) => placeholder(i)))]));
}

/**
 * A product lookup is one statement: the product by a unique index, joined by primary key to the
 * answer the import stored for it, so no lookup aggregates videos and PDP entries, and its cost
 * does not grow with the catalog. The answer is read as the bytes the import wrote, beside the
 * ETag it wrote with them, and sent as they are: a miss parses and writes no JSON, and hashes nothing.
 *
 * Many lookups are one statement for each MAX_BATCH_VALUES of them, by the same index. Single
 * lookups asked for in the same turn of the event loop while statements are in flight are read
 * that way too, a partner's in statements of up to 8 (LookupGathering): under load, a few requests
 * share a round trip to the database and a connection, where each used to take one of its own and
 * wait for it in the pool's queue.
 */
export class MysqlProductCatalog implements ProductCatalog {
  private readonly bySkus;
  private readonly byIds;
  private readonly skuLookups;
  private readonly idLookups;

  constructor(db: Kysely<Database>) {
    const answers = () => db
      .selectFrom('products')
      .leftJoin('product_lookups', 'product_lookups.product_id', 'products.id')
      // The whole body, as bytes: the database writes the stored text into it, and the driver hands
      // over the bytes it read (as text, it would decode them and parse them: MariaDB marks the column
      // JSON). A miss allocates and copies no body of its own.
      .select(['products.id', 'product_lookups.etag', sql<Buffer | null>`cast(concat(${sql.lit(LOOKUP_BODY_START)}, product_lookups.lookup, ${sql.lit(LOOKUP_BODY_END)}) as binary)`.as('body')]);
    const bySku = prepareQuery(
      db,
      (partnerId: string, sku: string) => answers().select('products.sku').where('products.partner_id', '=', partnerId).where('products.sku', '=', sku),
      ['<partner>', '<sku>'],
      { onServer: true },
    );
    const byId = prepareQuery(
      db,
      (partnerId: string, id: number) => answers().where('products.id', '=', id).where('products.partner_id', '=', partnerId),
      ['<partner>', -1],
      { onServer: true },
    );
    // Statement texts prepared once each; a list shorter than its statement repeats its last value.
    this.bySkus = listStatements((i) => `<sku ${i}>`, (placeholders: string[]) => prepareQuery(
      db,
      (partnerId: string, ...skus: string[]) => answers().select('products.sku').where('products.partner_id', '=', partnerId).where('products.sku', 'in', skus),
      ['<partner>', ...placeholders],
      { onServer: true },
    ));
    this.byIds = listStatements((i) => -1 - i, (placeholders: number[]) => prepareQuery(
      db,
      (partnerId: string, ...ids: number[]) => answers().where('products.id', 'in', ids).where('products.partner_id', '=', partnerId),
      ['<partner>', ...placeholders],
      { onServer: true },
    ));
    this.skuLookups = new LookupGathering<string, SkuRow>((partnerId, skus) => readList(bySku, this.bySkus, partnerId, skus), (row) => row.sku);
    this.idLookups = new LookupGathering<number, AnswerRow>((partnerId, ids) => readList(byId, this.byIds, partnerId, ids), (row) => row.id);
  }

  findBySku(partnerId: string, sku: Sku): Promise<LookupAnswer | null> {
    return this.skuLookups.find(partnerId, sku);
  }

  findById(partnerId: string, id: ProductId): Promise<LookupAnswer | null> {
    return this.idLookups.find(partnerId, id);
  }

  findManyBySku(partnerId: string, skus: readonly Sku[]): Promise<(LookupAnswer | null)[]> {
    return batchRead(partnerId, skus.length, async () => {
      const rows = new Map<string, AnswerRow>();
      for (const chunk of chunks(skus)) for (const row of await readList(undefined, this.bySkus, partnerId, chunk)) rows.set(row.sku, row);
      return skus.map((sku) => answerOf(rows.get(sku)));
    });
  }

  findManyById(partnerId: string, ids: readonly ProductId[]): Promise<(LookupAnswer | null)[]> {
    return batchRead(partnerId, ids.length, async () => {
      const rows = new Map<number, AnswerRow>();
      for (const chunk of chunks(ids)) for (const row of await readList(undefined, this.byIds, partnerId, chunk)) rows.set(row.id, row);
      return ids.map((id) => answerOf(rows.get(id)));
    });
  }
}

/** The rows of up to MAX_BATCH_VALUES values: by the single statement for one value (when given one), else by the smallest list statement that holds them. */
function readList<V, R>(single: Read<V, R> | undefined, lists: Map<number, Read<V, R>>, partnerId: string, values: readonly V[]): Promise<R[]> {
  if (values.length === 1 && single !== undefined) return single(partnerId, values[0]!);
  const { size, padded } = fitToSize(values, LIST_SIZES);
  return lists.get(size)!(partnerId, ...padded);
}

/** A batch lookup's reads: its own, in a span of the request's when it is traced (a batch shares no statement). */
function batchRead<T>(partnerId: string, values: number, read: () => Promise<T>): Promise<T> {
  if (activeSpan() === undefined) return read();
  return traced('mysql lookup batch', { 'db.system.name': 'mysql', 'db.operation.name': 'SELECT', 'db.collection.name': 'products', 'pcat.partner.id': partnerId, 'pcat.values': values }, read);
}

/** The values in lists of at most MAX_BATCH_VALUES. */
function* chunks<T>(values: readonly T[]): Generator<T[]> {
  for (let start = 0; start < values.length; start += MAX_BATCH_VALUES) yield values.slice(start, start + MAX_BATCH_VALUES);
}

/**
 * The most gathered lookups one statement reads. The database reads a statement's rows one after
 * the other, and a cold row is a read from storage: a turn that gathered 30 lookups after a pause
 * made one slow statement, while the pool's other connections sat idle. Measured on the cold
 * uniform load (1,000,000 products, 50 connections): at most 8 a statement answered 11,300 to
 * 13,300 requests a second, against 9,800 to 10,700 with the turn's whole list in one statement.
 */
const GATHERED_PER_STATEMENT = 8;

interface Waiter {
  readonly resolve: (answer: LookupAnswer | null) => void;
  readonly reject: (error: unknown) => void;
  /** The lookup's request span, while tracing is on and it is recorded: the statement's span links to it. */
  readonly link: SpanContext | undefined;
}

/** The spans of the requests a statement answers, to link from its span. */
function linksOf<V>(values: readonly V[], waiting: Map<V, Waiter[]>): (SpanContext | undefined)[] {
  const links: (SpanContext | undefined)[] = [];
  for (const value of values) for (const waiter of waiting.get(value)!) links.push(waiter.link);
  return links;
}

/**
 * Single lookups read together. While no statement is in flight, a lookup is read at once, alone:
 * an idle service waits for nothing (deferring every lookup to the turn's end cost a lone client 4 to
 * 6 % of its requests a second, and 20 µs of CPU an answer more). While statements are in flight,
 * lookups are gathered until the end of the event loop's turn (setImmediate), then read with one
 * statement for each partner and GATHERED_PER_STATEMENT values: the many of a busy turn share round
 * trips and connections. Callers of the same value in one gathering share its answer. A failed
 * statement fails the lookups it read, and no others; a row that cannot be answered fails its own
 * lookups alone.
 */
class LookupGathering<V, R extends AnswerRow> {
  private gathered = new Map<string, Map<V, Waiter[]>>();
  private scheduled = false;
  /** Statements sent and not yet answered. */
  private reading = 0;

  constructor(
    private readonly read: (partnerId: string, values: readonly V[]) => Promise<R[]>,
    private readonly valueOf: (row: R) => V,
  ) {}

  find(partnerId: string, value: V): Promise<LookupAnswer | null> {
    return new Promise((resolve, reject) => {
      if (this.reading === 0 && !this.scheduled) {
        // Nothing in flight nor gathered: read at once, as a lookup alone.
        this.answer(partnerId, [value], new Map([[value, [{ resolve, reject, link: linkableContext() }]]]));
        return;
      }
      let values = this.gathered.get(partnerId);
      if (values === undefined) {
        values = new Map();
        this.gathered.set(partnerId, values);
      }
      const waiters = values.get(value);
      const waiter = { resolve, reject, link: linkableContext() };
      if (waiters === undefined) values.set(value, [waiter]);
      else waiters.push(waiter);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.readGathered());
      }
    });
  }

  private readGathered(): void {
    this.scheduled = false;
    const gathered = this.gathered;
    this.gathered = new Map();
    for (const [partnerId, waiting] of gathered) {
      const values = [...waiting.keys()];
      // Split evenly into statements of at most GATHERED_PER_STATEMENT values each.
      const size = Math.ceil(values.length / Math.ceil(values.length / GATHERED_PER_STATEMENT));
      for (let start = 0; start < values.length; start += size) this.answer(partnerId, values.slice(start, start + size), waiting);
    }
  }

  private answer(partnerId: string, values: readonly V[], waiting: Map<V, Waiter[]>): void {
    this.reading += 1;
    const span = tracing() === undefined ? undefined : startSharedSpan('mysql lookup', linksOf(values, waiting), {
      'db.system.name': 'mysql', 'db.operation.name': 'SELECT', 'db.collection.name': 'products', 'pcat.partner.id': partnerId, 'pcat.values': values.length,
    });
    // Within its span, the replica chosen (or the primary, and why) is told to it.
    const reading = span === undefined ? this.read(partnerId, values) : runIn(span, () => this.read(partnerId, values));
    reading.then((rows) => {
      endSpan(span);
      this.reading -= 1;
      const found = new Map<V, R>();
      for (const row of rows) found.set(this.valueOf(row), row);
      for (const value of values) {
        let answer: LookupAnswer | null;
        try {
          answer = answerOf(found.get(value));
        } catch (error) {
          for (const waiter of waiting.get(value)!) waiter.reject(error);
          continue;
        }
        for (const waiter of waiting.get(value)!) waiter.resolve(answer);
      }
    }, (error: unknown) => {
      endSpan(span, error);
      this.reading -= 1;
      for (const value of values) for (const waiter of waiting.get(value)!) waiter.reject(error);
    });
  }
}

function answerOf(row: AnswerRow | undefined): LookupAnswer | null {
  if (row === undefined) return null;
  // Every import and the migration that added the table write one per product: none means the schema is behind.
  if (row.body === null) throw new Error(`product ${row.id} has no stored lookup answer; run the migrate command`);
  // The bytes are the driver's and nothing writes into them; the response cache copies what it keeps.
  if (row.etag !== null) return LookupAnswer.ofBody(row.body, row.etag);
  // The migration that built the answers wrote no ETag, nor compact text: until the next import
  // rewrites it, such an answer is written again here, and held in the same form as the others.
  return LookupAnswer.ofResultText(JSON.stringify((JSON.parse(row.body.toString('utf8')) as { data: LookupResult }).data));
}
