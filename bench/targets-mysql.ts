import { basename, resolve } from 'node:path';
import { createConnection, type Connection } from 'mysql2/promise';
import { catalogFilePieces } from '../src/adapters/catalog-file/catalog-pieces.js';
import { MysqlCatalogStore } from '../src/adapters/mysql/mysql-catalog-store.js';
import { MysqlCursorKeys } from '../src/adapters/mysql/mysql-cursor-keys.js';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import { ImportCatalog } from '../src/application/catalog-import/import-catalog.js';
import { systemClock } from '../src/application/common/clock.js';
import { openBenchRedis } from './bench-redis.js';
import { openBenchTopologies } from './bench-topologies.js';
import { tracedEnv } from './otlp-sink.js';
import type { BenchContext, Target } from './target.js';
import { demoProducts } from '../src/adapters/catalog-file/catalog-file.js';

export const SERVER_URL = process.env.BENCH_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
export const CACHE_ON_ROW = 'service, MySQL, response cache on';
/** The response-cache row (MySQL without Redis) run from a --baseline-dir checkout, on the same database. */
export const cacheOnBaselineRow = (dir: string): string => `${CACHE_ON_ROW}, baseline ${basename(resolve(dir))}`;
/** As deployed: MySQL, counts and version tokens in Redis, the default CACHE_TTL_MS. */
export const PRODUCTION_ROW = 'service, MySQL + Redis, production settings';
/** The production row run from a --baseline-dir checkout, on the same database and Redis. */
export const productionBaselineRow = (dir: string): string => `${PRODUCTION_ROW}, baseline ${basename(resolve(dir))}`;
/** The production row with Redis run as Sentinel or Cluster instead of one server. */
export const topologyRow = (topology: 'Sentinel' | 'Cluster'): string => `service, MySQL + Redis ${topology}, production settings`;

/** A database of the bench's own holding the bench catalog: the service's environment for it, and how to drop it. */
export interface MysqlBenchDatabase {
  readonly env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * Creates database `name` on `server`, migrates it and imports `catalogFile` into it, as an
 * operator's first import would; its URL.
 */
export async function createBenchDatabase(server: Connection, name: string, catalogFile: string): Promise<string> {
  await server.query(`create database \`${name}\``);
  const url = `${SERVER_URL}/${name}`;
  const db = createMysqlDatabase(url, { queryTimeoutMs: 600_000 });
  try {
    await migrateToLatest(db);
    await new ImportCatalog(new MysqlCatalogStore(db), systemClock, new MysqlCursorKeys(db, { secret: null }), demoProducts).execute(catalogFilePieces(catalogFile));
  } finally {
    await db.destroy();
  }
  return url;
}

/** Null, with a line saying why, when MariaDB cannot be reached. */
export async function openMysqlBenchDatabase(context: Pick<BenchContext, 'catalog' | 'serviceEnv'>, purpose: string): Promise<MysqlBenchDatabase | null> {
  let server;
  try {
    server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  } catch (error) {
    process.stdout.write(`bench: MariaDB at ${SERVER_URL} unreachable (${(error as Error).message}); no MySQL ${purpose}\n`);
    return null;
  }
  const name = `pcat_bench_${process.pid}_${Date.now()}`;
  const url = await createBenchDatabase(server, name, context.catalog.file);
  return {
    env: { ...context.serviceEnv, STORAGE: 'mysql', DATABASE_URL: url },
    drop: async () => {
      await server.query(`drop database if exists \`${name}\``);
      await server.end();
    },
  };
}

/**
 * The service on MySQL with the response cache on and off, and with the production settings (none
 * without Redis); none without MariaDB.
 */
export async function mysqlTargets(context: BenchContext, baselineDirs: readonly string[] = []): Promise<Target[]> {
  const database = await openMysqlBenchDatabase(context, 'rows');
  if (database === null) return [];
  const { env } = database;
  const redis = await openBenchRedis('production row');
  const topologies = redis === null ? [] : await openBenchTopologies();
  return [
    ...baselineDirs.map((dir) => ({ name: cacheOnBaselineRow(dir), script: resolve(dir, 'src/main.ts'), env: { ...env, CACHE_TTL_MS: '30000' } })),
    { name: CACHE_ON_ROW, script: context.serviceScript, env: { ...env, CACHE_TTL_MS: '30000' } },
    { name: 'service, MySQL, response cache off', script: context.serviceScript, env: { ...env, CACHE_TTL_MS: '0' }, cleanup: () => database.drop() },
    ...(redis === null ? [] : [
      ...baselineDirs.map((dir) => ({ name: productionBaselineRow(dir), script: resolve(dir, 'src/main.ts'), env: { ...env, ...redis.env } })),
      { name: `${PRODUCTION_ROW}, traces at 1 %`, script: context.serviceScript, env: { ...env, ...redis.env, ...tracedEnv(context.otlpSink, 0.01) } },
      { name: `${PRODUCTION_ROW}, traces at 100 %`, script: context.serviceScript, env: { ...env, ...redis.env, ...tracedEnv(context.otlpSink, 1) } },
      { name: PRODUCTION_ROW, script: context.serviceScript, env: { ...env, ...redis.env }, cleanup: () => redis.cleanup() },
    ]),
    ...topologies.map((topology) => ({ name: topologyRow(topology.name), script: context.serviceScript, env: { ...env, ...topology.env }, cleanup: () => topology.cleanup() })),
  ];
}
