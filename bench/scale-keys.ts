/**
 * The key rows of `npm run bench:scale`: two instances on MySQL + Redis (the production settings)
 * over 10,000, 100,000 and 1,000,000 live keys of 1,000 partners, stored as `keys issue` stores
 * them. For each size: each instance's time from its start to `/readyz` 200 and its RSS then; the
 * statements and bytes each instance read from the database per key change (MariaDB's per-user
 * statistics: each instance connects as a user of its own); how many requests a revoked key took
 * to be refused on each instance (1: the next one) and how long after the revocation returned; and
 * the p99 of another key's lookups during a burst of 100 key changes against its quiet p99, with
 * the 5xx answers counted. Keys are revoked and issued through the operator's own use cases
 * (`keys revoke`, `keys issue`), announced through Redis as the CLI announces them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { catalogFilePieces } from '../src/adapters/catalog-file/catalog-pieces.js';
import { readConfig } from '../src/adapters/config/config.js';
import { openOperatorCommands } from '../src/composition/operator-commands.js';
import { openBenchRedis } from './bench-redis.js';
import { percentile } from './percentile.js';
import { freePort, rssMb } from './server-process.js';
import { SERVER_URL } from './targets-mysql.js';

const PARTNERS = 1_000;
/** Key changes whose reads are averaged for the statements and bytes per change. */
const MEASURED_CHANGES = 20;
const BURST_CHANGES = 100;
/** Lookups in flight at once against each instance while the p99 is measured. */
const LOOKUP_CONCURRENCY = 4;
const QUIET_LOOKUPS = 2_000;
const LOOKUP_PARTNER = 'scale-lookups';
const LOOKUP_SKU = 'TENT-2P';

/** The plaintext of the n-th bench key: well-formed (40 base62 characters), known to the bench, stored only as its hash. */
const benchKeySql = (seq: string): string => `concat('pcat_live_', lpad(${seq}, 40, 'k'))`;
const benchKey = (n: number): string => `pcat_live_${String(n).padStart(40, 'k')}`;

interface Instance {
  readonly name: string;
  readonly user: string;
  readonly base: string;
  readonly child: ChildProcess;
  readyMs: number;
  rssMb: number;
}

export interface ScaleKeyRow {
  readonly keys: number;
  readonly readyMs: readonly number[];
  readonly rssMb: readonly number[];
  readonly rssAfterMb: readonly number[];
  readonly statementsPerChange: readonly number[];
  readonly bytesPerChange: readonly number[];
  readonly refusedAfterRequests: readonly number[];
  readonly refusedAfterMs: readonly number[];
  readonly quietP50Ms: number;
  readonly quietP99Ms: number;
  readonly burstP50Ms: number;
  readonly burstP99Ms: number;
  readonly burst5xx: number;
  readonly burstLookups: number;
}

export async function runScaleKeyRows(sizes: readonly number[]): Promise<ScaleKeyRow[]> {
  const redis = await openBenchRedis('scale rows');
  if (redis === null) return [];
  const server = await createConnection({ uri: SERVER_URL, connectTimeout: 2_000, multipleStatements: true });
  const [[stat]] = await server.query<RowDataPacket[]>('select @@global.userstat as userstat');
  await server.query('set global userstat = 1');
  const rows: ScaleKeyRow[] = [];
  try {
    for (const size of sizes) {
      await redisFlush(redis.env.REDIS_URL!);
      const row = await runSize(server, redis.env, size);
      rows.push(row);
      print(row);
    }
  } finally {
    await server.query(`set global userstat = ${Number(stat!.userstat)}`);
    await server.end();
    await redis.cleanup();
  }
  return rows;
}

async function runSize(server: Connection, redisEnv: Record<string, string>, size: number): Promise<ScaleKeyRow> {
  const name = `pcat_scale_${process.pid}_${size}`;
  const users = ['pcat_scale_a', 'pcat_scale_b'];
  await server.query(`drop database if exists \`${name}\``);
  await server.query(`create database \`${name}\` character set utf8mb4 collate utf8mb4_bin`);
  for (const user of users) {
    await server.query(`drop user if exists '${user}'@'%'`);
    await server.query(`create user '${user}'@'%' identified by 'scale'`);
    await server.query(`grant all on \`${name}\`.* to '${user}'@'%'`);
  }
  const env = {
    ...redisEnv, RATE_LIMIT_STORE: 'redis', STORAGE: 'mysql', DATABASE_URL: `${SERVER_URL}/${name}`, LOG_LEVEL: 'warn', PORTAL_PORT: '0', METRICS_PORT: '0',
    // The bench measures key changes, not limits: no lookup of its own is refused for its rate or its failed keys.
    RATE_LIMIT_PER_MINUTE: '1000000000', AUTH_FAILURES_PER_MINUTE: '1000000000',
  };
  const commands = await openOperatorCommands(readConfig(env));
  const instances: Instance[] = [];
  try {
    await commands.migrate();
    const dir = mkdtempSync(join(tmpdir(), 'pcat-scale-'));
    const file = join(dir, 'catalog.json');
    // The demo partner's catalog, under a partner id of the bench's own.
    const demo = JSON.parse(readFileSync('catalogs/demo-catalog.json', 'utf8')) as { partners: Record<string, unknown>[] };
    writeFileSync(file, JSON.stringify({ ...demo, partners: [{ ...demo.partners[0], id: LOOKUP_PARTNER, api_keys: [] }] }));
    await commands.importCatalog(catalogFilePieces(file));
    const issued = await commands.issueKey(LOOKUP_PARTNER, 'live', 'lookups');
    // As `keys issue` stores them: live CLI keys of 1,000 partners; the counter left where migrations leave it.
    await server.query(`use \`${name}\``);
    await server.query(`insert into \`${name}\`.partners (id, name) select concat('p', seq), concat('Partner ', seq) from seq_0_to_${PARTNERS - 1}`);
    await server.query(`insert into \`${name}\`.api_keys (id, partner_id, mode, sha256, label, origin, created_at, revoked_at)
      select concat('scale-', seq), concat('p', seq mod ${PARTNERS}), 'live', sha2(${benchKeySql('seq')}, 256), null, 'cli', now(3), null from seq_1_to_${size}`);

    for (const [i, user] of users.entries()) instances.push(await startInstance(`instance ${'AB'[i]!}`, user, { ...env, DATABASE_URL: `mysql://${user}:scale@${SERVER_URL.replace(/^mysql:\/\/[^@]*@/, '')}/${name}` }));
    const agent = new Agent({ keepAlive: true, maxSockets: LOOKUP_CONCURRENCY * 4 });
    const lookup = (instance: Instance, key: string): Promise<number> => status(agent, `${instance.base}/api/v1/public/sku/${LOOKUP_SKU}`, key);

    // Statements and bytes per key change, and how soon a revoked key is refused on each instance.
    let next = 1;
    for (const instance of instances) expect(await lookup(instance, benchKey(1)), 404, `a bench key on ${instance.name}`);
    const before = await userStatistics(server, users);
    const refusedAfterRequests = instances.map(() => 0);
    const refusedAfterMs = instances.map(() => 0);
    for (let change = 0; change < MEASURED_CHANGES; change += 1) {
      const keyNumber = next++;
      await commands.revokeKey(`scale-${keyNumber}`);
      const revokedAt = performance.now();
      for (const [i, instance] of instances.entries()) {
        let requests = 0;
        while ((requests += 1, await lookup(instance, benchKey(keyNumber))) !== 401) if (requests > 10_000) throw new Error(`${instance.name} never refused a revoked key`);
        refusedAfterRequests[i] = Math.max(refusedAfterRequests[i]!, requests);
        refusedAfterMs[i] = Math.max(refusedAfterMs[i]!, performance.now() - revokedAt);
      }
    }
    const after = await userStatistics(server, users);
    const statementsPerChange = users.map((user) => (after[user]!.statements - before[user]!.statements) / MEASURED_CHANGES);
    const bytesPerChange = users.map((user) => (after[user]!.bytes - before[user]!.bytes) / MEASURED_CHANGES);

    // Another key's lookups, quiet (after a warm-up), then during a burst of key changes.
    await lookups(instances, (instance) => lookup(instance, issued.key), () => QUIET_LOOKUPS / 2);
    const quiet = await lookups(instances, (instance) => lookup(instance, issued.key), () => QUIET_LOOKUPS);
    let changing = true;
    const burst = lookups(instances, (instance) => lookup(instance, issued.key), (done) => (changing || done < QUIET_LOOKUPS / 4 ? Infinity : done));
    for (let change = 0; change < BURST_CHANGES; change += 1) {
      if (change % 2 === 0) await commands.revokeKey(`scale-${next++}`);
      else await commands.issueKey(`p${change % PARTNERS}`, 'live', 'burst');
    }
    changing = false;
    const burstRun = await burst;
    agent.destroy();
    const rssAfter = instances.map((instance) => rssMb(instance.child.pid!));
    return {
      keys: size,
      readyMs: instances.map((instance) => instance.readyMs),
      rssMb: instances.map((instance) => instance.rssMb),
      rssAfterMb: rssAfter,
      statementsPerChange,
      bytesPerChange,
      refusedAfterRequests,
      refusedAfterMs,
      quietP50Ms: percentile(quiet.latencies, 50),
      quietP99Ms: percentile(quiet.latencies, 99),
      burstP50Ms: percentile(burstRun.latencies, 50),
      burstP99Ms: percentile(burstRun.latencies, 99),
      burst5xx: burstRun.errors5xx,
      burstLookups: burstRun.latencies.length,
    };
  } finally {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await commands.close();
    await server.query(`drop database if exists \`${name}\``);
    for (const user of users) await server.query(`drop user if exists '${user}'@'%'`);
  }
}

async function startInstance(name: string, user: string, env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before it was ready`);
    const ready = await fetch(`${base}/readyz`).then((response) => response.status === 200, () => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { name, user, base, child, readyMs: performance.now() - startedAt, rssMb: rssMb(child.pid!) };
}

/** Lookups spread over the instances, LOOKUP_CONCURRENCY at a time on each, until `limit(done)` is reached; every latency and the 5xx counted. */
async function lookups(instances: readonly Instance[], one: (instance: Instance) => Promise<number>, limit: (done: number) => number): Promise<{ latencies: number[]; errors5xx: number }> {
  const latencies: number[] = [];
  let errors5xx = 0;
  const worker = async (instance: Instance): Promise<void> => {
    while (latencies.length < limit(latencies.length)) {
      const startedAt = performance.now();
      const answered = await one(instance);
      latencies.push(performance.now() - startedAt);
      if (answered >= 500) errors5xx += 1;
      else expect(answered, 200, `a lookup on ${instance.name}`);
    }
  };
  await Promise.all(instances.flatMap((instance) => Array.from({ length: LOOKUP_CONCURRENCY }, () => worker(instance))));
  return { latencies, errors5xx };
}

function status(agent: Agent, url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${key}` } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function expect(actual: number, wanted: number, what: string): void {
  if (actual !== wanted) throw new Error(`${what}: answered ${actual}, expected ${wanted}`);
}

/** Statements (every command counted by MariaDB's user statistics) and bytes each user's connections were sent. */
async function userStatistics(server: Connection, users: readonly string[]): Promise<Record<string, { statements: number; bytes: number }>> {
  const [rows] = await server.query<RowDataPacket[]>(
    `select user, select_commands + update_commands + other_commands as statements, bytes_sent as bytes from information_schema.user_statistics where user in (?)`, [users]);
  return Object.fromEntries(users.map((user) => {
    const row = rows.find((candidate) => candidate.user === user);
    return [user, { statements: Number(row?.statements ?? 0), bytes: Number(row?.bytes ?? 0) }];
  }));
}

async function redisFlush(url: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url);
  await client.flushall();
  client.disconnect();
}

const fixed = (value: number, digits = 0): string => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pair = (values: readonly number[], digits = 0, unit = ''): string => values.map((value) => `${fixed(value, digits)}${unit}`).join(' / ');

function print(row: ScaleKeyRow): void {
  process.stdout.write([
    `\n${fixed(row.keys)} live keys, two instances (A / B) on MySQL + Redis:`,
    `  start to /readyz 200:             ${pair(row.readyMs.map((ms) => ms / 1_000), 1, ' s')}`,
    `  RSS when ready, after the burst:  ${pair(row.rssMb, 0, ' MB')}, ${pair(row.rssAfterMb, 0, ' MB')}`,
    `  statements read per key change:   ${pair(row.statementsPerChange, 1)}`,
    `  bytes sent per key change:        ${pair(row.bytesPerChange, 0, ' B')}`,
    `  a revoked key refused after:      ${pair(row.refusedAfterRequests, 0, ' request(s)')}, at most ${pair(row.refusedAfterMs, 0, ' ms')} after its revocation returned`,
    `  another key's lookups, p50 / p99: quiet ${fixed(row.quietP50Ms, 1)} / ${fixed(row.quietP99Ms, 1)} ms, during ${BURST_CHANGES} key changes ` +
      `${fixed(row.burstP50Ms, 1)} / ${fixed(row.burstP99Ms, 1)} ms (p99 ${fixed(row.burstP99Ms / row.quietP99Ms, 2)}x; target <= 2x), ` +
      `${row.burst5xx} 5xx of ${fixed(row.burstLookups)}`,
  ].join('\n') + '\n');
}
