/**
 * The cold rows' catalog: 1,000,000 products of one partner in a MariaDB database of its own, seeded
 * once (bench:mysql's SQL copy of one imported product, a few minutes) and kept between runs, since
 * seeding it again each run would cost more than the rows themselves. A database that is already
 * there with the right number of products, stored answers and keys is used as it is.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { migrateToLatest } from '../src/adapters/mysql/migrate.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import type { Database } from '../src/adapters/mysql/database.js';
import { hashApiKey } from '../src/domain/api-key.js';
import { etagOf, lookupBodyOfText } from '../src/domain/lookup-body.js';
import { benchKey } from './bench-catalog.js';
import { seedBySql } from './mysql-catalog.js';
import { SERVER_URL } from './targets-mysql.js';

export const COLD_PARTNER = 'bench';
/** Key ids `bench-<n>`, as the table's catalog has: the bench's Redis clean-up finds their counters by that name. */
export const keyId = (i: number): string => `bench-${i}`;

export interface ColdCatalog {
  /** The database's URL (DATABASE_URL for the service and the limit server). */
  readonly url: string;
  readonly partner: string;
  readonly products: number;
  /** SKUs are `${skuPrefix}0` to `${skuPrefix}${products - 1}`. */
  readonly skuPrefix: string;
  readonly keys: readonly string[];
}

/** MariaDB's buffer pool and the stored answers' size on disk, in MB: whether a random lookup reads from memory or from storage. */
export async function bufferPoolAndAnswersMb(catalog: ColdCatalog): Promise<{ pool: number; answers: number }> {
  const server = await createConnection({ uri: catalog.url, connectTimeout: 2_000 });
  try {
    const [rows] = await server.query<({ pool: number | string; answers: number | string } & RowDataPacket)[]>(`select @@innodb_buffer_pool_size div 1048576 as pool,
      (select (data_length + index_length) div 1048576 from information_schema.tables where table_schema = database() and table_name = 'product_lookups') as answers`);
    return { pool: Number(rows[0]!.pool), answers: Number(rows[0]!.answers) };
  } finally {
    await server.end();
  }
}

/**
 * Whether a sample of the stored answers is compact JSON with the ETag of its body, as an import
 * writes them (a lookup sends both as they are): a database seeded by an older bench is seeded again.
 */
async function answersAsImported(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ lookup: string; etag: string | null }>`select cast(lookup as char) as lookup, etag from product_lookups
    where product_id in (select min(id) from products union select max(id) from products union select (min(id) + max(id)) div 2 from products)`.execute(db);
  return rows.length === 3 && rows.every(({ lookup, etag }) => JSON.stringify(JSON.parse(lookup)) === lookup && etag === etagOf(lookupBodyOfText(lookup)));
}

/** The database's name says its size, so a run with another --cold-products seeds a database of its own. */
const databaseName = (products: number): string => `pcat_bench_cold_${products}`;

export async function openColdCatalog(products: number, keys: number): Promise<ColdCatalog> {
  const name = databaseName(products);
  const url = `${SERVER_URL.replace(/\/$/, '')}/${name}`;
  const keyList = Array.from({ length: keys }, (_, i) => benchKey(i));
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000 });
  try {
    await server.query(`create database if not exists \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
    const db = createMysqlDatabase(url, { queryTimeoutMs: 3_600_000 });
    try {
      await migrateToLatest(db);
      const { rows } = await sql<{ products: number | string; answers: number | string; keys: number | string }>`select
        (select count(*) from products where partner_id = ${COLD_PARTNER}) as products,
        (select count(*) from product_lookups where partner_id = ${COLD_PARTNER}) as answers,
        (select count(*) from api_keys where partner_id = ${COLD_PARTNER} and revoked_at is null) as \`keys\``.execute(db);
      const found = rows[0]!;
      if (Number(found.products) === products && Number(found.answers) === products && Number(found.keys) === keys && await answersAsImported(db)) {
        process.stdout.write(`bench: cold rows on ${name}, already seeded (${products.toLocaleString('en-US')} products, ${keys} keys)\n`);
        return { url, partner: COLD_PARTNER, products, skuPrefix: 'B-', keys: keyList };
      }
    } finally {
      await db.destroy();
    }
    // Anything else (a half-finished seed, another size): start again from an empty database.
    process.stdout.write(`bench: seeding ${name} with ${products.toLocaleString('en-US')} products in SQL (once; kept for later runs)...\n`);
    await server.query(`drop database \`${name}\``);
    await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
    const fresh = createMysqlDatabase(url, { queryTimeoutMs: 3_600_000 });
    const dir = await mkdtemp(join(tmpdir(), 'pcat-cold-'));
    const start = performance.now();
    try {
      await migrateToLatest(fresh);
      await seedBySql(fresh, url, dir, COLD_PARTNER, products, keyList.map((key, i) => ({ id: keyId(i), sha256: hashApiKey(key) })));
    } finally {
      await rm(dir, { recursive: true, force: true });
      await fresh.destroy();
    }
    process.stdout.write(`bench: seeded ${name} in ${((performance.now() - start) / 1000).toFixed(0)} s\n`);
    return { url, partner: COLD_PARTNER, products, skuPrefix: 'B-', keys: keyList };
  } finally {
    await server.end();
  }
}
