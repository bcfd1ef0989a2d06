/**
 * The replica rows of `npm run bench` (`--only replica`; `--only cold` runs them too, after the
 * cold rows): the production configuration (MySQL storage, Redis limits on the bench's own
 * redis-server, every setting at its default but the bench's two, so DATABASE_REPLICA_WAIT_MS at
 * its 1000 ms) answering random SKUs, uniform, of a catalog none of whose answers the response
 * cache holds at the start, on a MariaDB primary and a GTID replica of the bench's own
 * (test/support/mariadb-replication.ts: row binary logs, the replica read-only to the service's
 * user), in alternating rounds with the bare node:http server under the same load as the
 * reference, each run on a fresh server after a 2 s warm-up:
 *
 * - cold, read from the primary: DATABASE_URL on the primary and no replica.
 * - cold, read from a replica: the same with DATABASE_REPLICA_URLS naming the replica; lookups
 *   read it, each connection waiting once for the changes the instance has seen before it is lent.
 * - cold, replica lagging: as the replica row, but after the warm-up the replica stops applying
 *   (STOP SLAVE SQL_THREAD) and a one-product import of another partner goes through the CLI with
 *   REDIS_URL set, so its tokens carry the primary's position past the replica's; lookups are made
 *   one at a time until the service has sent a read to the primary for it, then the load is
 *   measured: every read the replica would have taken goes to the primary. The replica applies
 *   again, and catches up, after the run.
 *
 * For each run: statements per answer on each server, from its global Questions counter read as
 * root over its socket just before and just after the measured run, less what the readings add
 * themselves; and for the service, from its own /metrics over the measured run, the reads a replica
 * could have taken that went to the primary, by reason, the response cache's hit rate, and the
 * replica's lag at the end. Load: wrk, or autocannon where wrk is not installed.
 */
import { join } from 'node:path';
import { sql } from 'kysely';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import type { PrimaryReadReason } from '../src/adapters/mysql/replica-reads.js';
import { hashApiKey } from '../src/domain/api-key.js';
import { reasonOf } from '../src/domain/failure-reason.js';
import { startReplicatedMariadb, type ReplicatedMariadb } from '../test/support/mariadb-replication.js';
import type { MariadbServer } from '../test/support/mariadb-server.js';
import { benchKey } from './bench-catalog.js';
import { openBenchRedis } from './bench-redis.js';
import { bufferPoolAndAnswersMb, COLD_PARTNER, keyId, type ColdCatalog } from './cold-catalog.js';
import { ratio, SKU_PATH, skuScript } from './cold-rows.js';
import { LOAD_CONNECTIONS, runAutocannon, runWrk, type Load } from './load.js';
import { cliImport, seedBySql, writeCatalogFile } from './mysql-catalog.js';
import { median } from './percentile.js';
import { cores, cpuMicros, freePort, pinned, withServer } from './server-process.js';
import type { BenchContext } from './target.js';

export const PRIMARY_ROW = 'cold, read from the primary';
export const REPLICA_ROW = 'cold, read from a replica';
export const LAGGING_ROW = 'cold, replica lagging';
const BARE_ROW = 'bare node:http, pre-built bytes';

/**
 * The default --replica-products: 100,000, not the cold rows' 1,000,000. The pair is the bench's
 * own and gone after each run, so its catalog is seeded every run: 100,000 products take 25 to
 * 35 s, and their stored answers (about 410 MB) are already three times each server's 128 MB
 * InnoDB buffer pool, so a random lookup mostly misses it, as on the larger catalog; a million
 * would take about ten times as long, and send gigabytes of row events to the replica, every run.
 */
export const DEFAULT_REPLICA_PRODUCTS = 100_000;

const DATABASE = 'pcat_bench_replica';
/** The partner the lagging row's imports change, so the bench partner's answers stay as they are. */
const LAGGING_PARTNER = 'bench-lagging';
const WARM_UP_S = 2;
/**
 * What two readings of a server's Questions counter add to it themselves: each reading is a
 * connection of its own over the socket, so the earlier one's closing (COM_QUIT) counts, and the
 * later one's statement (measured: two, with nothing else connected).
 */
const READING_STATEMENTS = 2;
/** Lookups made one at a time, each waiting up to DATABASE_REPLICA_WAIT_MS, before the lagging row says the service never fell back. */
const FALL_BACK_LOOKUPS = 20;
const BARE_SCRIPT = 'bench/bare-server.ts';
const PRIMARY_READS = 'pcat_db_primary_reads_total';
const REASONS: readonly PrimaryReadReason[] = ['lagging', 'unreachable', 'no_position'];

export interface ReplicaRowChoice {
  readonly primary: boolean;
  readonly replica: boolean;
  readonly lagging: boolean;
}

/** Every row in a full run; with --only, those whose name contains one of its texts, and the primary row with the replica row, which is read against it. */
export function chooseReplicaRows(only: readonly string[] | undefined): ReplicaRowChoice {
  const chosen = (name: string): boolean => only === undefined || only.some((text) => name.includes(text));
  return { primary: chosen(PRIMARY_ROW) || chosen(REPLICA_ROW), replica: chosen(REPLICA_ROW), lagging: chosen(LAGGING_ROW) };
}

export const anyReplicaRow = (choice: ReplicaRowChoice): boolean => choice.primary || choice.replica || choice.lagging;

export interface ReplicaRowOptions {
  readonly rounds: number;
  readonly durationS: number;
  /** The pair's catalog (--replica-products). */
  readonly products: number;
  readonly keys: number;
}

type RowKind = 'bare' | 'primary' | 'replica' | 'lagging';

interface ReplicaRow {
  readonly name: string;
  readonly kind: RowKind;
}

/** What the service's /metrics said over one measured run. */
interface ServiceFigures {
  readonly hits: number;
  readonly misses: number;
  readonly primaryReads: Readonly<Record<PrimaryReadReason, number>>;
  /** pcat_db_replica_lag_seconds at the end of the run. */
  readonly lagSeconds: number;
}

interface ReplicaSample extends Load {
  /** The server's CPU time per answer, in microseconds. */
  readonly cpuUs: number;
  /** Statements each database server ran per answer over the measured run. */
  readonly statements: { readonly primary: number; readonly replica: number };
  readonly service?: ServiceFigures;
}

/** What every run needs. */
interface Setup {
  readonly context: BenchContext;
  readonly pair: ReplicatedMariadb;
  readonly catalog: ColdCatalog;
  /** The service's environment for the primary row: the replica rows add DATABASE_REPLICA_URLS. */
  readonly env: Record<string, string>;
  readonly redisUrl: string;
  readonly durationS: number;
}

/** The chosen rows, on a primary and replica started, seeded and closed here; nothing without mariadbd or Redis. */
export async function runReplicaRows(context: BenchContext, choice: ReplicaRowChoice, options: ReplicaRowOptions): Promise<void> {
  const redis = await openBenchRedis('replica rows');
  if (redis === null) return;
  try {
    let pair: ReplicatedMariadb;
    try {
      pair = await startReplicatedMariadb({ databases: [DATABASE] });
    } catch (error) {
      process.stdout.write(`bench: no replica rows: a MariaDB primary and replica did not start (${reasonOf(error)})\n`);
      return;
    }
    try {
      const catalog = await seed(context, pair, options);
      const setup: Setup = {
        context, pair, catalog, redisUrl: redis.env.REDIS_URL!, durationS: options.durationS,
        env: { ...context.serviceEnv, STORAGE: 'mysql', DATABASE_URL: catalog.url, ...redis.env },
      };
      const rows: ReplicaRow[] = [
        { name: BARE_ROW, kind: 'bare' },
        ...(choice.primary ? [{ name: PRIMARY_ROW, kind: 'primary' as const }] : []),
        ...(choice.replica ? [{ name: REPLICA_ROW, kind: 'replica' as const }] : []),
        ...(choice.lagging ? [{ name: LAGGING_ROW, kind: 'lagging' as const }] : []),
      ];
      const [version] = await pair.primary.query('select version() as version');
      const sizes = await bufferPoolAndAnswersMb(catalog);
      process.stdout.write(`\nbench: replica rows, ${rows.length} rows x ${options.rounds} rounds x ${options.durationS}s, ${catalog.products.toLocaleString('en-US')} products of one partner ` +
        `(stored answers ${sizes.answers.toLocaleString('en-US')} MB, InnoDB buffer pool ${sizes.pool.toLocaleString('en-US')} MB on each server), ${catalog.keys.length} keys, ` +
        `load ${context.generator} (${LOAD_CONNECTIONS} connections), uniform random SKUs; MariaDB ${String(version!.version)} primary and GTID replica of the bench's own, ` +
        `${pinned ? 'service on core 0, load and Redis on core 1, MariaDB on either' : 'not pinned'}, ${cores} cores\n`);
      const samples = new Map<ReplicaRow, ReplicaSample[]>(rows.map((row) => [row, []]));
      for (let round = 0; round < options.rounds; round += 1) {
        // Alternate the order so drift on a shared machine does not favour one row.
        const order = round % 2 === 0 ? rows : [...rows].reverse();
        for (const row of order) {
          const sample = await measure(row, setup, round);
          samples.get(row)!.push(sample);
          process.stdout.write(`  round ${round + 1}: ${row.name}: ${describe(sample)}\n`);
        }
      }
      printReplicaTable(rows, samples);
    } finally {
      await pair.close();
    }
  } finally {
    await redis.cleanup();
  }
}

/** Seeds the primary as the cold rows' database is seeded (bench:mysql's SQL copies of one imported product), and waits for the replica to apply it all. */
async function seed(context: BenchContext, pair: ReplicatedMariadb, options: ReplicaRowOptions): Promise<ColdCatalog> {
  const url = pair.primaryUrl(DATABASE);
  const keys = Array.from({ length: options.keys }, (_, i) => benchKey(i));
  process.stdout.write(`\nbench: seeding a MariaDB primary of the bench's own with ${options.products.toLocaleString('en-US')} products for the replica rows...\n`);
  const start = performance.now();
  const db = createMysqlDatabase(url, { queryTimeoutMs: 3_600_000 });
  try {
    await migrateToLatest(db);
    await seedBySql(db, url, context.dir, COLD_PARTNER, options.products, keys.map((key, i) => ({ id: keyId(i), sha256: hashApiKey(key) })));
    // InnoDB updates the sizes information_schema reports in the background: counted now, the header's size of the stored answers is this catalog's.
    await sql`analyze table product_lookups`.execute(db);
  } finally {
    await db.destroy();
  }
  const seeded = performance.now();
  await pair.caughtUp();
  process.stdout.write(`bench: seeded in ${((seeded - start) / 1000).toFixed(0)} s; the replica had applied it all ${((performance.now() - seeded) / 1000).toFixed(1)} s later\n`);
  return { url, partner: COLD_PARTNER, products: options.products, skuPrefix: 'B-', keys };
}

/** Random SKUs of the catalog, uniform, with its keys in turn: by wrk as the cold rows do, or by autocannon without it. */
function drive(base: string, setup: Setup, seconds: number): Promise<Load> {
  const { context, catalog } = setup;
  if (context.generator === 'wrk') {
    // A fresh seed each run: the measured run must not replay the SKUs its warm-up put in the cache.
    const seed = Math.floor(Math.random() * 2 ** 31);
    return runWrk(base, join(context.dir, 'replica-cold.lua'), skuScript(catalog, 'uniform', seed), seconds, pinned);
  }
  const randomSku = { path: `${SKU_PATH}${catalog.skuPrefix}`, products: catalog.products, keys: catalog.keys };
  return runAutocannon(join(context.dir, 'replica-cold.json'), { url: base, duration: seconds, randomSku }, pinned);
}

async function measure(row: ReplicaRow, setup: Setup, round: number): Promise<ReplicaSample> {
  const { context, pair } = setup;
  if (row.kind === 'bare') {
    return withServer(BARE_SCRIPT, { BODY_FILE: context.bodyFile }, async (base, pid) => {
      await drive(base, setup, WARM_UP_S); // warm-up: JIT
      return measured(base, pid, setup);
    });
  }
  const metricsPort = await freePort();
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const replicas = row.kind === 'primary' ? {} : { DATABASE_REPLICA_URLS: pair.replicaUrl(DATABASE) };
  try {
    return await withServer(context.serviceScript, { ...setup.env, ...replicas, METRICS_PORT: String(metricsPort) }, async (base, pid) => {
      await drive(base, setup, WARM_UP_S); // warm-up: JIT, connections, prepared statements, the replica connections' first wait
      if (row.kind === 'lagging' && !(await fallBehind(base, metricsUrl, setup, round))) {
        process.stdout.write(`  round ${round + 1}: ${row.name}: no read went to the primary for a lagging replica in ${FALL_BACK_LOOKUPS} lookups after the import: ` +
          'the service did not wait for its position\n');
      }
      return measured(base, pid, setup, metricsUrl);
    });
  } finally {
    if (row.kind === 'lagging') {
      await pair.resumeApplying();
      await pair.caughtUp();
    }
  }
}

/**
 * Stops the replica applying, imports a change of another partner through the CLI, announced
 * through Redis, then makes lookups one at a time until the service's metrics show a read sent to
 * the primary because the replica lags; false if none did within FALL_BACK_LOOKUPS.
 */
async function fallBehind(base: string, metricsUrl: string, setup: Setup, round: number): Promise<boolean> {
  const { context, pair, catalog } = setup;
  await pair.stopApplying();
  const file = join(context.dir, 'replica-lagging.json');
  // A variant of its own each round, so that every import commits a change, and so moves the position.
  await writeCatalogFile(file, LAGGING_PARTNER, 1, `round ${round + 1}`);
  await cliImport(process.cwd(), pair.primaryUrl(DATABASE), file, setup.redisUrl);
  for (let lookup = 0; lookup < FALL_BACK_LOOKUPS; lookup += 1) {
    const sku = `${catalog.skuPrefix}${Math.floor(Math.random() * catalog.products)}`;
    const response = await fetch(`${base}${SKU_PATH}${sku}`, { headers: { Authorization: `Bearer ${catalog.keys[0]!}` } });
    await response.arrayBuffer();
    if (((await scrape(metricsUrl)).get(`${PRIMARY_READS}{reason="lagging"}`) ?? 0) > 0) return true;
  }
  return false;
}

/** One measured run on a server already warmed up: the load, the server's CPU, each database server's statements and, given its URL, the service's metrics. */
async function measured(base: string, pid: number, setup: Setup, metricsUrl?: string): Promise<ReplicaSample> {
  const { primary, replica } = setup.pair;
  const before = { cpu: cpuMicros(pid), primary: await questions(primary), replica: await questions(replica), metrics: metricsUrl === undefined ? undefined : await scrape(metricsUrl) };
  const load = await drive(base, setup, setup.durationS);
  const cpuUs = (cpuMicros(pid) - before.cpu) / Math.max(1, load.requests);
  const perAnswer = async (server: MariadbServer, was: number): Promise<number> => ((await questions(server)) - was - READING_STATEMENTS) / Math.max(1, load.requests);
  const statements = { primary: await perAnswer(primary, before.primary), replica: await perAnswer(replica, before.replica) };
  if (metricsUrl === undefined || before.metrics === undefined) return { ...load, cpuUs, statements };
  const after = await scrape(metricsUrl);
  const delta = (series: string): number => (after.get(series) ?? 0) - (before.metrics!.get(series) ?? 0);
  const primaryReads = Object.fromEntries(REASONS.map((reason) => [reason, delta(`${PRIMARY_READS}{reason="${reason}"}`)])) as Record<PrimaryReadReason, number>;
  const lags = [...after].filter(([series]) => series.startsWith('pcat_db_replica_lag_seconds{')).map(([, value]) => value);
  return {
    ...load, cpuUs, statements,
    service: {
      hits: delta('pcat_response_cache_lookups_total{result="hit"}'), misses: delta('pcat_response_cache_lookups_total{result="miss"}'),
      primaryReads, lagSeconds: Math.max(0, ...lags),
    },
  };
}

/** The server's count of statements clients sent it (Questions), read as root over its socket. */
async function questions(server: MariadbServer): Promise<number> {
  const [row] = await server.query("show global status like 'Questions'");
  return Number(row!.Value);
}

/** The service's figures, each series (name and labels as written) apart. */
async function scrape(metricsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(pcat_[a-z_]+(?:\{[^}]*\})?) ([0-9.e+-]+)$/.exec(line);
    if (match !== null) values.set(match[1]!, Number(match[2]));
  }
  return values;
}

const readsByReason = (reads: Readonly<Record<PrimaryReadReason, number>>): string => REASONS.map((reason) => `${reason} ${Math.round(reads[reason])}`).join(', ');

function describe(sample: ReplicaSample): string {
  const s = sample.service;
  return `${Math.round(sample.rps)} req/s, p99 ${sample.p99Ms.toFixed(1)} ms, statements per request: primary ${sample.statements.primary.toFixed(3)}, replica ${sample.statements.replica.toFixed(3)}` +
    (s === undefined ? '' : `, hit rate ${hitRate(s)}, reads sent to the primary: ${readsByReason(s.primaryReads)}, replica lag at the end ${s.lagSeconds.toFixed(1)} s`) +
    (sample.errors > 0 ? `, ${sample.errors} errors` : '');
}

const hitRate = (s: ServiceFigures): string => `${((100 * s.hits) / Math.max(1, s.hits + s.misses)).toFixed(1)} %`;

/** Medians over the rounds; ratios taken round by round against the bare server, or the primary row, of the same round, then the median. */
function printReplicaTable(rows: ReplicaRow[], samples: Map<ReplicaRow, ReplicaSample[]>): void {
  const bare = samples.get(rows.find((row) => row.kind === 'bare')!)!;
  const header = ['server', 'req/s (median)', 'ratio to bare', 'p50 ms', 'p99 ms', 'CPU µs/answer', 'statements per request, primary', 'statements per request, replica',
    'reads sent to the primary, by reason (median)', 'cache hit rate', 'errors'];
  process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const row of rows) {
    const s = samples.get(row)!;
    const figures = s.flatMap((x) => (x.service === undefined ? [] : [x.service]));
    const reads = row.kind === 'bare' || row.kind === 'primary'
      ? '-'
      : readsByReason(Object.fromEntries(REASONS.map((reason) => [reason, median(figures.map((f) => f.primaryReads[reason]))])) as Record<PrimaryReadReason, number>);
    process.stdout.write(`| ${[
      row.name, String(Math.round(median(s.map((x) => x.rps)))), ratio(s, bare, 'rps'), median(s.map((x) => x.p50Ms)).toFixed(2), median(s.map((x) => x.p99Ms)).toFixed(2),
      median(s.map((x) => x.cpuUs)).toFixed(1), median(s.map((x) => x.statements.primary)).toFixed(3), median(s.map((x) => x.statements.replica)).toFixed(3),
      reads, figures.length === 0 ? '-' : figures.map(hitRate).join(', '), String(s.reduce((n, x) => n + x.errors, 0)),
    ].join(' | ')} |\n`);
  }
  process.stdout.write('(statements: each server\'s Questions over the measured run per answer, less the bench\'s readings; lookups that miss together share a statement; hit rate: each round in turn)\n');
  const primary = rows.find((row) => row.kind === 'primary');
  if (primary === undefined) return;
  const onPrimary = samples.get(primary)!;
  for (const [row, target] of [[REPLICA_ROW, 'target >= 0.95; '], [LAGGING_ROW, '']] as const) {
    const found = rows.find((r) => r.name === row);
    if (found === undefined) continue;
    const s = samples.get(found)!;
    const rounds = s.map((x, round) => x.rps / onPrimary[round]!.rps);
    process.stdout.write(`${row} against ${PRIMARY_ROW} (same rounds): req/s ${median(rounds).toFixed(3)} (${target}rounds ${rounds.map((r) => r.toFixed(3)).join(', ')}), ` +
      `p99 ${ratio(s, onPrimary, 'p99Ms')}\n`);
  }
}
