import { createConnection } from 'mysql2/promise';
import { readFileSync } from 'node:fs';
import { importCatalog } from '../src/adapters/mysql/import-catalog.js';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import { parseCatalogSourceText } from '../src/domain/catalog-source.js';
import type { BenchContext, Target } from './target.js';

const SERVER_URL = process.env.BENCH_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';

/** The service on MySQL with the response cache on and off, over a database of its own; none without MariaDB. */
export async function mysqlTargets(context: BenchContext): Promise<Target[]> {
  let server;
  try {
    server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  } catch (error) {
    process.stdout.write(`bench: MariaDB at ${SERVER_URL} unreachable (${(error as Error).message}); no MySQL rows\n`);
    return [];
  }
  const name = `pcat_bench_${process.pid}`;
  await server.query(`create database \`${name}\``);
  const url = `${SERVER_URL}/${name}`;
  const db = createMysqlDatabase(url, { queryTimeoutMs: 600_000 });
  try {
    await migrateToLatest(db);
    await importCatalog(db, parseCatalogSourceText(readFileSync(context.catalog.file, 'utf8')));
  } finally {
    await db.destroy();
  }
  const env = { ...context.serviceEnv, STORAGE: 'mysql', DATABASE_URL: url };
  const cleanup = async (): Promise<void> => {
    await server.query(`drop database if exists \`${name}\``);
    await server.end();
  };
  return [
    { name: 'service, MySQL, response cache on', script: 'src/main.ts', env: { ...env, CACHE_TTL_MS: '30000' } },
    { name: 'service, MySQL, response cache off', script: 'src/main.ts', env: { ...env, CACHE_TTL_MS: '0' }, cleanup },
  ];
}
