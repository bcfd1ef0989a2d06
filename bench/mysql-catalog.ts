/**
 * Catalogs for the MySQL benches: one-partner catalog files written as a stream, imported through
 * the CLI process as an operator would, and a large catalog seeded in SQL from one imported product
 * (`npm run bench:mysql`, and the cold rows of `npm run bench`).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/adapters/mysql/database.js';
import type { ImportReport } from '../src/application/catalog-import/operator-commands.js';

const transcript = 'Lay the footprint down first, then cross the poles and clip the body to them. '.repeat(6);

/** One product as a catalog file holds it: 1 video, 2 PDP entries. */
export function productDocument(i: number, variant: string): Record<string, unknown> {
  return {
    sku: `B-${i}`, status: 'active', title: `Bench product ${i}`, description: 'A freestanding three-season tent for two.',
    short_description: 'Freestanding 2-person tent.', image: `https://img.example/${i}.jpg`,
    what_text: 'A light tent.', who_text: 'Backpackers.', why_text: 'It saves weight.', brand: 'Bench',
    properties: [{ name: 'Capacity', value: '2 people' }, { name: 'Weight', value: '2.1 kg' }],
    videos: [{
      ref: `v-${i}`, published: true, name: 'Pitching the tent', description: null, aspect_ratio: '16x9', length: 92.5,
      language: 'en', family_friendly: true, genre: ['How-to'], keywords: ['tent'],
      creator: { name: 'Dana Reyes', job_title: 'Gear Specialist' }, transcript: `${transcript}${variant}`,
    }],
    pdp_urls: [
      { pdp_url: `https://shop.example/p/${i}`, retailer: 'Shop', video_ref: `v-${i}`, video_file_url: `https://cdn.example/${i}.mp4` },
      { pdp_url: `https://outlet.example/p/${i}`, retailer: null, video_ref: `v-${i}`, video_file_url: `https://cdn.example/${i}.mp4` },
    ],
  };
}

/**
 * Writes a one-partner catalog file of `size` products as a stream, so the bench itself stays small;
 * with `keys`, the partner's API keys (id and SHA-256 of each) too.
 */
export async function writeCatalogFile(file: string, partnerId: string, size: number, variant = '', keys: readonly { id: string; sha256: string }[] = []): Promise<number> {
  const out = createWriteStream(file);
  const write = async (text: string): Promise<void> => {
    if (!out.write(text)) await once(out, 'drain');
  };
  await write(`{"format":"partner-catalog/v1","partners":[{"id":${JSON.stringify(partnerId)},"name":"Partner ${partnerId}",${keys.length === 0 ? '' : `"api_keys":${JSON.stringify(keys)},`}"products":[\n`);
  for (let i = 0; i < size; i += 1) await write(`${i === 0 ? '' : ',\n'}${JSON.stringify(productDocument(i, variant))}`);
  await write(']}]}\n');
  out.end();
  await once(out, 'finish');
  return (await stat(file)).size;
}

export interface CliImport {
  readonly ms: number;
  readonly peakRssMb: number;
  readonly report: ImportReport;
}

/**
 * Runs `cli import <file> --json` of a checkout as its own process, as an operator would; its peak
 * RSS from GNU time. With `redisUrl` the import is announced to the running instances through that
 * Redis, its tokens carrying the primary's position; without, to none.
 */
export async function cliImport(serviceDir: string, databaseUrl: string, file: string, redisUrl?: string): Promise<CliImport> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
  if (redisUrl === undefined) delete env.REDIS_URL;
  else env.REDIS_URL = redisUrl;
  const start = performance.now();
  const child = spawn('/usr/bin/time', ['-f', 'peak-rss-kb %M', process.execPath, '--import', 'tsx', join(serviceDir, 'src/cli.ts'), 'import', file, '--json'], {
    cwd: serviceDir, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = await once(child, 'exit') as [number | null];
  const ms = performance.now() - start;
  const peak = /peak-rss-kb (\d+)/.exec(stderr);
  if (code !== 0 || peak === null) throw new Error(`import of ${file} failed (exit ${String(code)}): ${stderr.slice(-2_000)}`);
  return { ms, peakRssMb: Number(peak[1]) / 1024, report: JSON.parse(stdout) as ImportReport };
}

/**
 * Copies one imported product `size` times in SQL: seeding a million through the importer would take
 * minutes. SKUs are `B-0` to `B-<size - 1>`; `keys` are imported with the first product.
 */
export async function seedBySql(db: Kysely<Database>, databaseUrl: string, dir: string, partnerId: string, size: number, keys: readonly { id: string; sha256: string }[] = []): Promise<void> {
  const file = join(dir, `seed-${partnerId}.json`);
  await writeCatalogFile(file, partnerId, 1, '', keys);
  await cliImport(process.cwd(), databaseUrl, file);
  await rm(file);
  const seq = sql.raw(`seq_1_to_${size - 1}`);
  await sql`insert into products (partner_id, sku, content_hash)
    select p.partner_id, concat('B-', s.seq), p.content_hash from products p join ${seq} s where p.partner_id = ${partnerId}`.execute(db);
  await sql`insert into videos (partner_id, ref, product_id, content_hash)
    select v.partner_id, concat('v-', p.id), p.id, v.content_hash
    from products p join videos v on v.partner_id = p.partner_id and v.ref = 'v-0' where p.partner_id = ${partnerId} and p.sku <> 'B-0'`.execute(db);
  await sql`insert into pdp_entries (product_id, pdp_url_hash, json_ld_hash, content_hash)
    select p.id, sha2(concat(e.pdp_url_hash, p.id), 256), e.json_ld_hash, e.content_hash
    from products p join products p0 on p0.partner_id = p.partner_id and p0.sku = 'B-0' join pdp_entries e on e.product_id = p0.id
    where p.partner_id = ${partnerId} and p.sku <> 'B-0'`.execute(db);
  // Each copy's stored lookup answer is B-0's with the copy's own SKU, IDs and URLs, compact as an
  // import writes it, with the ETag `etagOf` gives its body (SHA-256, base64url, 32 characters); in
  // id ranges, as one statement over a million rows overflows InnoDB's lock table.
  const { first, last } = await db.selectFrom('products').where('partner_id', '=', partnerId)
    .select((eb) => [eb.fn.min('id').as('first'), eb.fn.max('id').as('last')]).executeTakeFirstOrThrow();
  for (let from = first; from <= last; from += 50_000) {
    await sql`insert into product_lookups (product_id, lookup_hash, lookup, etag, partner_id, feed_seq, changed_at)
      select a.id, null, a.lookup,
        concat('"', left(replace(replace(to_base64(unhex(sha2(concat('{"data":', a.lookup, '}'), 256))), '+', '-'), '/', '_'), 32), '"'),
        a.partner_id, a.id - ${first} + 1, current_timestamp(3)
      from (select p.id, p.partner_id, json_compact(json_set(l0.lookup, '$.sku', p.sku, '$.product.id', p.id, '$.product.videos[0].id', v.id,
          '$.product.pdp_urls[0].id', e0.id, '$.product.pdp_urls[0].pdp_url', concat('https://shop.example/p/', p.id),
          '$.product.pdp_urls[1].id', e1.id, '$.product.pdp_urls[1].pdp_url', concat('https://outlet.example/p/', p.id))) as lookup
        from products p join products p0 on p0.partner_id = p.partner_id and p0.sku = 'B-0'
        join product_lookups l0 on l0.product_id = p0.id
        join videos v on v.product_id = p.id
        join (select product_id, min(id) as id from pdp_entries group by product_id) e0 on e0.product_id = p.id
        join (select product_id, max(id) as id from pdp_entries group by product_id) e1 on e1.product_id = p.id
        where p.partner_id = ${partnerId} and p.sku <> 'B-0' and p.id between ${from} and ${from + 49_999}) a`.execute(db);
  }
  // The feed as a first import leaves it: every product once, in id order (B-0 holds the import's position 1).
  await sql`update partners set feed_seq = ${last - first + 1} where id = ${partnerId}`.execute(db);
}
