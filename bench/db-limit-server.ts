/**
 * The limit of a cold lookup: a bare node:http server that answers each `GET
 * /api/v1/public/sku/<sku>` with one server-side prepared SELECT of the answer the import stored for
 * that partner's SKU, through a mysql2 pool of the size the service lends by default, the stored
 * JSON text written as the body as MariaDB sends it. No key check, rate limit, cache, parse or log:
 * what the service does on a cache miss beyond this is its own cost. 404 for an unknown SKU or
 * another path, 503 if the database fails.
 *
 * With REDIS_URL set, each request is first counted on Redis by the service's own adapters
 * (RedisRateLimiter over a RedisRequestRoundTrip with a watch: the counts of a loop turn's requests
 * and the version tokens in one EVALSHA, as the service makes them). One count per key shared by every instance, and changes seen on an instance's next request
 * (docs/several-instances.md), make that round trip part of every lookup with Redis limits: this is
 * the floor of a miss under those promises. Each key is counted under `bench-limit-` and the key's
 * last characters, which the bench removes from Redis with its own counters.
 *
 * Runs on its own: DATABASE_URL=mysql://root@127.0.0.1:3306/pcat_bench_cold_1000000 PORT=3005
 * PARTNER=bench node --import tsx bench/db-limit-server.ts (the database `npm run bench -- --only
 * cold` seeds and keeps), then `curl localhost:3005/api/v1/public/sku/B-42`.
 */
import { createServer } from 'node:http';
import { createPool } from 'mysql2';
import { SERVING_POOL } from '../src/adapters/mysql/mysql-database.js';
import { RedisRateLimiter } from '../src/adapters/redis/redis-rate-limiter.js';
import { RedisRequestRoundTrip } from '../src/adapters/redis/request-round-trip.js';
import { ChangesElsewhere } from '../src/application/instances/changes-elsewhere.js';
import { redisAt } from '../src/adapters/redis/redis-target.js';

const url = process.env.DATABASE_URL;
if (url === undefined) throw new Error('DATABASE_URL is not set');
const partner = process.env.PARTNER ?? 'bench';
const PREFIX = '/api/v1/public/sku/';

const pool = createPool({
  uri: url,
  // The service's pool size: its default, or DATABASE_POOL_SIZE as the service reads it.
  connectionLimit: Number(process.env.DATABASE_POOL_SIZE ?? SERVING_POOL.connectionLimit),
  charset: 'utf8mb4_bin',
  // The stored answer as the text MariaDB sends, not parsed into an object and serialized again.
  jsonStrings: true,
});

/** What a cache miss reads: the stored answer of one partner's SKU, by the (partner_id, sku) index. */
const SELECT_ANSWER = 'select l.lookup from products p join product_lookups l on l.product_id = p.id where p.partner_id = ? and p.sku = ?';

const redisUrl = process.env.REDIS_URL;
const counter = redisUrl === undefined || redisUrl === ''
  ? null
  : new RedisRateLimiter(new RedisRequestRoundTrip({ target: redisAt(redisUrl), watch: new ChangesElsewhere() }), { limit: 1_000_000_000 });

createServer((req, res) => {
  const path = req.url ?? '';
  if (!path.startsWith(PREFIX)) {
    res.writeHead(404, { 'Content-Length': 0 }).end();
    return;
  }
  if (counter === null) {
    select(path, res);
    return;
  }
  counter.consume(countKey(req.headers.authorization), partner).then(() => select(path, res), () => res.writeHead(503, { 'Content-Length': 0 }).end());
}).listen(Number(process.env.PORT ?? 3005), '127.0.0.1');

/** The count's key of a request's key, under the bench's own prefix (bench-redis.ts removes them). */
function countKey(authorization: string | undefined): string {
  return `bench-limit-${(authorization ?? '').slice(-12)}`;
}

function select(path: string, res: import('node:http').ServerResponse): void {
  pool.execute<({ lookup: string } & import('mysql2').RowDataPacket)[]>(SELECT_ANSWER, [partner, path.slice(PREFIX.length)], (error, rows) => {
    if (error !== null) {
      res.writeHead(503, { 'Content-Length': 0 }).end();
      return;
    }
    const body = rows[0]?.lookup;
    if (body === undefined) {
      res.writeHead(404, { 'Content-Length': 0 }).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
}
