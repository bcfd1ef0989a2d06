/**
 * The webhook rows of `npm run bench` (`--only webhooks` runs all three; `--only "first attempt"`,
 * `--only "lookups while"` or `--only "another partner"` one). All run the production
 * configuration: MySQL storage on a database of the bench's own seeded with the bench catalog (as
 * the MySQL rows'), Redis limits on the bench's own redis-server, every setting at its default but
 * the bench's two, plus WEBHOOK_ALLOW_PRIVATE_TARGETS=true so that receivers on 127.0.0.1 may be
 * endpoints. The
 * endpoints are written to the store directly, and the imports that queue messages for them are
 * ImportCatalog run in this process (as the CLI runs it), each changing one product's title of a
 * small partner of the row's own; the bench partner's catalog is never touched.
 *
 * - First attempt after the commit: one instance, one endpoint answering 204 (a node:http receiver
 *   in this process). The imports go one after another, each after a random pause of up to one
 *   poll interval, so that commits fall anywhere in the instance's polling cycle; for each, the
 *   time from the moment MariaDB answered the import's `commit` to the receiver having the
 *   request's head, both on this process's clock. Every request is
 *   verified with the official standardwebhooks library; a message arrived exactly once when its
 *   webhook-id was seen once, verified, by 3 s after the last import's.
 * - Lookups while 10 endpoints hang: the production row's lookup load on a fresh instance, in
 *   alternating rounds, "hanging" (a partner with 10 endpoints whose receivers take the request and
 *   never answer, holding the socket, with WEBHOOK_TIMEOUT_MS at its default 15 s so no attempt
 *   ends within a run) against "quiet" (the same imports, of a partner with no endpoint, so nothing
 *   is queued). Both sides import every 200 ms from the instance's start to the end of the measured
 *   run, and each run starts with an empty outbox, so what one run left claimed is never made by
 *   the next. At the end of each measured run: the deliveries waiting (the instance's own
 *   pcat_webhook_deliveries_waiting), those claimed (the outbox), and the requests the receivers hold.
 * - Another partner's message while 10 endpoints of one partner hang: one instance, a partner whose
 *   10 endpoints take the request and never answer (WEBHOOK_TIMEOUT_MS at its default 15 s), with a
 *   backlog of imports queued for them before the instance starts, as an instance finds them after
 *   a restart. A second partner's imports go one after another, each once the hanging receivers
 *   have held the same number of requests for three poll intervals (every slot the instance will
 *   give them is taken again) and after a random pause of up to one poll interval; for each, the
 *   time from its `commit` to its receiver (answering 204) having the request's head, and whether
 *   an attempt at a hanging endpoint ended in between (the message then waited for a slot that a
 *   timeout freed).
 */
import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../src/adapters/mysql/database.js';
import { MysqlCatalogStore } from '../src/adapters/mysql/mysql-catalog-store.js';
import { MysqlCursorKeys } from '../src/adapters/mysql/mysql-cursor-keys.js';
import { createMysqlDatabase } from '../src/adapters/mysql/mysql-database.js';
import { MysqlWebhookEndpoints } from '../src/adapters/mysql/mysql-webhook-endpoints.js';
import { ImportCatalog } from '../src/application/catalog-import/import-catalog.js';
import { systemClock } from '../src/application/common/clock.js';
import { hashApiKey } from '../src/domain/api-key.js';
import { CATALOG_FORMAT } from '../src/domain/catalog-format.js';
import { piecesOfDocument } from '../src/domain/catalog-source.js';
import { newWebhookEndpointId } from '../src/domain/webhook-endpoint.js';
import type { WebhookMessage } from '../src/domain/webhook-messages.js';
import { generateWebhookSecret } from '../src/domain/webhook-secret.js';
import { checkWebhookUrl } from '../src/domain/webhook-url.js';
import { benchProduct } from './bench-catalog.js';
import { openBenchRedis } from './bench-redis.js';
import { drive, LOAD_CONNECTIONS, type Load } from './load.js';
import { median, percentile } from './percentile.js';
import { cores, cpuMicros, freePort, pinned, withServer } from './server-process.js';
import type { BenchContext } from './target.js';
import { openMysqlBenchDatabase } from './targets-mysql.js';
import { demoProducts } from '../src/adapters/catalog-file/catalog-file.js';

export const FIRST_ATTEMPT_ROW = 'webhooks, first attempt after the commit';
export const HANGING_ROW = 'webhooks, lookups while 10 endpoints hang';
export const OTHER_PARTNER_ROW = 'webhooks, another partner\'s message while 10 endpoints of one partner hang';

/** The instance's default WEBHOOK_POLL_MS, which the rows keep: the pauses between the first row's imports spread over it. */
const DEFAULT_POLL_MS = 500;
/** How long the first row waits for an import's message before calling it missing. */
const ARRIVAL_TIMEOUT_MS = 10_000;
/** After the last import, how long the first row waits for a second attempt of any message, were one coming. */
const DUPLICATE_WAIT_MS = 3_000;
const HANGING_ENDPOINTS = 10;
const IMPORT_EVERY_MS = 200;
/** Products of each webhook partner; an import changes the first one's title. */
const HOOK_PRODUCTS = 10;
/** The third row's backlog for the hanging endpoints, queued before the instance starts: 400 deliveries, more than 16 slots take in 20 timeouts. */
const HANGING_BACKLOG_IMPORTS = 40;
/** The third row's messages of the other partner, one after another. */
const OTHER_PARTNER_MESSAGES = 20;
/** How long the hanging receivers' count of held requests must stay still for the instance to have given them every slot it will. */
const SETTLED_FOR_MS = 3 * DEFAULT_POLL_MS;
/** How long the third row waits for the other partner's message: past two attempt timeouts (15 s at the default). */
const OTHER_ARRIVAL_TIMEOUT_MS = 40_000;

export interface WebhookRowChoice {
  readonly firstAttempt: boolean;
  readonly hanging: boolean;
  readonly otherPartner: boolean;
}

/** Every row in a full run; with --only, those whose name contains one of its texts. */
export function chooseWebhookRows(only: readonly string[] | undefined): WebhookRowChoice {
  const chosen = (name: string): boolean => only === undefined || only.some((text) => name.includes(text));
  return { firstAttempt: chosen(FIRST_ATTEMPT_ROW), hanging: chosen(HANGING_ROW), otherPartner: chosen(OTHER_PARTNER_ROW) };
}

/** Whether any webhook row is chosen. */
export const anyWebhookRow = (choice: WebhookRowChoice): boolean => choice.firstAttempt || choice.hanging || choice.otherPartner;

export interface WebhookRowOptions {
  readonly rounds: number;
  readonly durationS: number;
  /** The first row's imports. */
  readonly imports: number;
}

/** What both rows need: the instance's environment, the bench's own connection to its database, and imports into it. */
interface Setup {
  readonly context: BenchContext;
  readonly env: Record<string, string>;
  readonly db: Kysely<Database>;
  readonly imports: HookImports;
}

/** The chosen rows, on one database and one Redis; nothing without MariaDB and Redis. Every server, receiver, connection and the database are gone after. */
export async function runWebhookRows(context: BenchContext, choice: WebhookRowChoice, options: WebhookRowOptions): Promise<void> {
  const database = await openMysqlBenchDatabase(context, 'webhook rows');
  if (database === null) return;
  let redis;
  try {
    redis = await openBenchRedis('webhook rows');
    if (redis === null) return;
    const env = { ...database.env, ...redis.env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
    const db = createMysqlDatabase(database.env.DATABASE_URL!);
    const imports = new HookImports(database.env.DATABASE_URL!);
    try {
      const setup: Setup = { context, env, db, imports };
      if (choice.firstAttempt) await firstAttempt(setup, options.imports);
      if (choice.hanging) await hanging(setup, options);
      if (choice.otherPartner) await otherPartner(setup);
    } finally {
      await imports.close();
      await db.destroy();
    }
  } finally {
    await redis?.cleanup();
    await database.drop();
  }
}

/**
 * Imports of the small partners the rows queue messages for, each changing one product's title, on
 * a connection pool of their own that reports the moment each `commit` is answered.
 */
class HookImports {
  private readonly db: Kysely<Database>;
  private readonly importCatalog: ImportCatalog;
  private readonly versions = new Map<string, number>();
  /** When each `commit` since the last import began was answered. */
  private readonly commits: number[] = [];

  constructor(url: string) {
    this.db = createMysqlDatabase(url, {
      onStatement: (event) => {
        if (event.level === 'query' && event.query.sql === 'commit') this.commits.push(performance.now());
      },
    });
    this.importCatalog = new ImportCatalog(new MysqlCatalogStore(this.db), systemClock, new MysqlCursorKeys(this.db, { secret: null }), demoProducts);
  }

  /**
   * Imports the partner's catalog with its first product retitled (the first import of a partner
   * creates it); resolves with performance.now() when its transaction's `commit` was answered. One at a time.
   */
  async next(partnerId: string): Promise<number> {
    const version = (this.versions.get(partnerId) ?? -1) + 1;
    this.versions.set(partnerId, version);
    const key = `pcat_live_${partnerId.replace(/[^a-z0-9]/g, '').padEnd(40, '0').slice(0, 40)}`;
    const document = {
      format: CATALOG_FORMAT,
      partners: [{
        id: partnerId,
        name: `Webhook bench partner ${partnerId}`,
        api_keys: [{ id: `${partnerId}-0`, sha256: hashApiKey(key) }],
        products: Array.from({ length: HOOK_PRODUCTS }, (_, i) => benchProduct(`${partnerId.toUpperCase()}-${i}`, i, i === 0 ? `Hook product, version ${version}` : undefined)),
      }],
    };
    this.commits.length = 0;
    await this.importCatalog.execute(piecesOfDocument(document));
    const committedAt = this.commits.at(-1);
    if (committedAt === undefined) throw new Error('the import returned without a commit seen');
    return committedAt;
  }

  close(): Promise<void> {
    return this.db.destroy();
  }
}

/** An endpoint of the partner's, enabled, as `webhooks add` writes it (without the audit entry); its signing secret. */
async function addEndpoint(db: Kysely<Database>, partnerId: string, url: string): Promise<string> {
  const secret = generateWebhookSecret();
  const added = await new MysqlWebhookEndpoints(db).insertWithin({
    id: newWebhookEndpointId(), partnerId, url: checkWebhookUrl(url, { allowPrivateTargets: true }), description: 'bench receiver',
    status: 'enabled', createdAt: new Date(), secrets: { current: secret, previous: null },
  }, HANGING_ENDPOINTS);
  if (added !== 'added') throw new Error(`endpoint for ${partnerId} not added: ${added}`);
  return secret;
}

interface Receiver {
  readonly url: string;
  /** Ends every connection it holds, and stops listening. */
  close(): Promise<void>;
}

async function receiver(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<Receiver> {
  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** MariaDB's CPU time so far in microseconds, when it runs on this host (mariadbd or mysqld); NaN otherwise. */
function mariadbCpuMicros(): number {
  for (const name of ['mariadbd', 'mysqld']) {
    const pids = spawnSync('pgrep', ['-x', name]).stdout.toString().trim().split('\n').filter((pid) => pid !== '');
    if (pids.length > 0) return pids.reduce((sum, pid) => sum + cpuMicros(Number(pid)), 0);
  }
  return Number.NaN;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Arrival {
  /** performance.now() when the request's head was read. */
  readonly at: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** One import of the first row: its message's id and how long after the commit its first attempt arrived, or null if none did in time. */
interface FirstAttempt {
  readonly messageId: string | null;
  readonly ms: number | null;
  readonly importMs: number;
}

async function firstAttempt(setup: Setup, imports: number): Promise<void> {
  const partnerId = 'hooks-first-attempt';
  await setup.imports.next(partnerId); // the partner, before it has an endpoint: nothing is queued
  const arrivals: Arrival[] = [];
  const hook = await receiver((request, response) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(204).end();
      arrivals.push({ at, headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
    });
  });
  try {
    const secret = await addEndpoint(setup.db, partnerId, hook.url);
    process.stdout.write(`\n${FIRST_ATTEMPT_ROW}: ${imports} imports one after another, each changing one product and after a random pause of 0 to ${DEFAULT_POLL_MS} ms; ` +
      `one instance (production settings, WEBHOOK_POLL_MS default ${DEFAULT_POLL_MS}), one endpoint answering 204 from this process\n`);
    const results = await withServer(setup.context.serviceScript, setup.env, async () => {
      const done: FirstAttempt[] = [];
      const ids = new Set<string>();
      for (let i = 0; i < imports; i += 1) {
        await sleep(Math.random() * DEFAULT_POLL_MS);
        const seen = arrivals.length;
        const started = performance.now();
        const committed = await setup.imports.next(partnerId);
        let arrival: Arrival | undefined;
        // The import's message is the first one after it with an id not seen before: the imports go one at a time.
        for (const deadline = committed + ARRIVAL_TIMEOUT_MS; arrival === undefined && performance.now() < deadline;) {
          arrival = arrivals.slice(seen).find((a) => !ids.has(a.headers['webhook-id'] ?? ''));
          if (arrival === undefined) await sleep(5);
        }
        const messageId = arrival?.headers['webhook-id'] ?? null;
        if (messageId !== null) ids.add(messageId);
        done.push({ messageId, ms: arrival === undefined ? null : arrival.at - committed, importMs: committed - started });
      }
      await sleep(DUPLICATE_WAIT_MS);
      return done;
    });
    printFirstAttempts(results, arrivals, secret, partnerId);
  } finally {
    await hook.close();
  }
}

function printFirstAttempts(results: readonly FirstAttempt[], arrivals: readonly Arrival[], secret: string, partnerId: string): void {
  const webhook = new Webhook(secret);
  const expectedSku = `${partnerId.toUpperCase()}-0`;
  const verified = (arrival: Arrival): boolean => {
    try {
      const message = webhook.verify(arrival.body, arrival.headers) as WebhookMessage;
      return message.type === 'catalog.changed' && message.data.changes === 1 && message.data.items?.[0]?.sku === expectedSku;
    } catch {
      return false;
    }
  };
  const byId = new Map<string, Arrival[]>();
  for (const arrival of arrivals) {
    const id = arrival.headers['webhook-id'] ?? '';
    byId.set(id, [...(byId.get(id) ?? []), arrival]);
  }
  const once = results.filter((r) => r.messageId !== null && byId.get(r.messageId)!.length === 1 && verified(byId.get(r.messageId)![0]!)).length;
  const twice = results.filter((r) => r.messageId !== null && byId.get(r.messageId)!.length > 1).length;
  const failedVerification = arrivals.filter((a) => !verified(a)).length;
  const missing = results.filter((r) => r.ms === null).length;
  const ids = new Set(results.map((r) => r.messageId));
  const strays = arrivals.filter((a) => !ids.has(a.headers['webhook-id'] ?? '')).length;
  const ms = results.flatMap((r) => (r.ms === null ? [] : [r.ms]));
  const header = ['imports', 'first attempt after the commit: p50 ms', 'p99 ms', 'max ms', 'min ms', 'within 2 s', 'arrived exactly once, verified', 'more than once', 'not in 10 s', 'requests failing verification', 'other requests', 'import itself p50 ms'];
  process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  const cells = [
    String(results.length), percentile(ms, 50).toFixed(1), percentile(ms, 99).toFixed(1), Math.max(...ms).toFixed(1), Math.min(...ms).toFixed(1),
    `${ms.filter((x) => x <= 2_000).length} of ${results.length}`, `${once} of ${results.length}`, String(twice), String(missing), String(failedVerification), String(strays),
    percentile(results.map((r) => r.importMs), 50).toFixed(1),
  ];
  process.stdout.write(`| ${cells.join(' | ')} |\n`);
  process.stdout.write('(from the moment the import\'s `commit` was answered to the receiver reading the request\'s head, both on this process\'s clock; the import itself: from its start to that moment; the contract: a first attempt within 2 s of the commit)\n');
}

/** Imports of one partner every `everyMs` (or as soon as the last one ends, if it took longer), until stopped. */
function importEvery(imports: HookImports, partnerId: string, everyMs: number): { readonly made: () => number; readonly failed: () => number; stop(): Promise<void> } {
  const stopped = new AbortController();
  let made = 0;
  let failed = 0;
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      const started = performance.now();
      try {
        await imports.next(partnerId);
        made += 1;
      } catch {
        failed += 1;
      }
      await sleep(Math.max(0, everyMs - (performance.now() - started)));
    }
  })();
  return {
    made: () => made,
    failed: () => failed,
    stop: async () => {
      stopped.abort();
      await loop;
    },
  };
}

interface HangSample extends Load {
  readonly cpuUs: number;
  readonly importsPerS: number;
  readonly importFailures: number;
  /** pcat_webhook_deliveries_waiting at the end of the measured run. */
  readonly waiting: number;
  /** Deliveries under a live claim in the outbox at the end: attempts in flight or waiting for one of their endpoint's slots. */
  readonly claimed: number;
  /** Requests the receivers hold open at the end. */
  readonly held: number;
  /** Attempts the instance ended during the whole run, by outcome (pcat_webhook_attempts_total). */
  readonly ended: string;
  /** CPU time over the measured run, in ms per second: MariaDB's (NaN when not found on this host), and this process's (imports and receivers). */
  readonly dbCpu: number;
  readonly benchCpu: number;
}

interface Side {
  readonly name: string;
  readonly partnerId: string;
}

async function hanging(setup: Setup, { rounds, durationS }: WebhookRowOptions): Promise<void> {
  const { context, db } = setup;
  const held = new Set<ServerResponse>();
  const receivers = await Promise.all(Array.from({ length: HANGING_ENDPOINTS }, () => receiver((request, response) => {
    held.add(response);
    response.on('close', () => held.delete(response)); // the connection ended: the instance gave up, or was killed
    request.resume();
  })));
  try {
    const quiet: Side = { name: 'quiet: imports of a partner with no endpoint', partnerId: 'hooks-quiet' };
    const hung: Side = { name: `hanging: imports of a partner with ${HANGING_ENDPOINTS} endpoints that never answer`, partnerId: 'hooks-hanging' };
    for (const side of [quiet, hung]) await setup.imports.next(side.partnerId);
    for (const hook of receivers) await addEndpoint(db, hung.partnerId, hook.url);
    process.stdout.write(`\n${HANGING_ROW}: the production row's lookups (${context.generator}, ${LOAD_CONNECTIONS} connections, 2 s warm-up then ${durationS} s), ` +
      `${rounds} rounds in alternating order, a fresh instance and an empty outbox each run, an import every ${IMPORT_EVERY_MS} ms throughout; ` +
      `WEBHOOK_TIMEOUT_MS and WEBHOOK_CONCURRENCY at their defaults (15 s, 16); ${pinned ? 'server on core 0, load and Redis on core 1' : 'not pinned'}, ${cores} cores\n`);
    const sample = async (side: Side): Promise<HangSample> => {
      await db.deleteFrom('webhook_messages').execute(); // their deliveries and attempts go with them
      const metricsPort = await freePort();
      return withServer(context.serviceScript, { ...setup.env, METRICS_PORT: String(metricsPort) }, async (base, pid) => {
        const importing = importEvery(setup.imports, side.partnerId, IMPORT_EVERY_MS);
        try {
          await drive(context.generator, base, context, 2, pinned); // warm-up: JIT, caches; deliveries take their slots
          const cpuBefore = cpuMicros(pid);
          const dbCpuBefore = mariadbCpuMicros();
          const benchCpuBefore = process.cpuUsage();
          const madeBefore = importing.made();
          const started = performance.now();
          const load = await drive(context.generator, base, context, durationS, pinned);
          const cpuUs = (cpuMicros(pid) - cpuBefore) / Math.max(1, load.requests);
          const seconds = (performance.now() - started) / 1000;
          const importsPerS = (importing.made() - madeBefore) / seconds;
          const dbCpu = (mariadbCpuMicros() - dbCpuBefore) / 1000 / seconds;
          const benchCpuUsed = process.cpuUsage(benchCpuBefore);
          const benchCpu = (benchCpuUsed.user + benchCpuUsed.system) / 1000 / seconds;
          const heldNow = held.size;
          const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
          const waiting = Number(/^pcat_webhook_deliveries_waiting ([0-9.e+-]+)$/m.exec(metrics)?.[1] ?? Number.NaN);
          const ended = [...metrics.matchAll(/^pcat_webhook_attempts_total\{outcome="([a-z_]+)"\} ([0-9.e+-]+)$/gm)].map((m) => `${m[2]!} ${m[1]!}`).join(' + ') || '0';
          const { n } = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('claim_token', 'is not', null).where('claim_expires_at', '>', new Date()).executeTakeFirstOrThrow();
          return { ...load, cpuUs, importsPerS, importFailures: importing.failed(), waiting, claimed: Number(n), held: heldNow, ended, dbCpu, benchCpu };
        } finally {
          await importing.stop();
        }
      });
    };
    const samples = new Map<Side, HangSample[]>([[quiet, []], [hung, []]]);
    for (let round = 0; round < rounds; round += 1) {
      // Alternate the order so drift on a shared machine does not favour one side.
      for (const side of round % 2 === 0 ? [quiet, hung] : [hung, quiet]) {
        const s = await sample(side);
        samples.get(side)!.push(s);
        process.stdout.write(`  round ${round + 1}: ${side.name}: ${Math.round(s.rps)} req/s, p99 ${s.p99Ms.toFixed(2)} ms, ${s.cpuUs.toFixed(1)} µs CPU/answer, ` +
          `${s.importsPerS.toFixed(1)} imports/s, MariaDB ${s.dbCpu.toFixed(0)} and this process ${s.benchCpu.toFixed(0)} ms CPU/s; ` +
          `at the end ${s.waiting} deliveries waiting, ${s.claimed} claimed, ${s.held} held by the receivers, attempts ended ${s.ended}` +
          `${s.errors > 0 ? `, ${s.errors} errors` : ''}${s.importFailures > 0 ? `, ${s.importFailures} imports failed` : ''}\n`);
      }
    }
    printHanging(quiet, hung, samples);
  } finally {
    for (const hook of receivers) await hook.close();
  }
}

function printHanging(quiet: Side, hung: Side, samples: Map<Side, HangSample[]>): void {
  const header = ['side', 'req/s (median)', 'p50 ms', 'p99 ms', 'CPU µs/answer', 'imports/s', 'MariaDB CPU ms/s', 'this process CPU ms/s',
    'deliveries waiting at the end (rounds)', 'claimed (rounds)', 'held by the receivers (rounds)', 'attempts ended (rounds)', 'errors'];
  process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const side of [quiet, hung]) {
    const s = samples.get(side)!;
    const cells = [
      side.name, String(Math.round(median(s.map((x) => x.rps)))), median(s.map((x) => x.p50Ms)).toFixed(2), median(s.map((x) => x.p99Ms)).toFixed(2),
      median(s.map((x) => x.cpuUs)).toFixed(1), median(s.map((x) => x.importsPerS)).toFixed(1), median(s.map((x) => x.dbCpu)).toFixed(0), median(s.map((x) => x.benchCpu)).toFixed(0),
      s.map((x) => x.waiting).join(', '), s.map((x) => x.claimed).join(', '), s.map((x) => x.held).join(', '), s.map((x) => x.ended).join(', '), String(s.reduce((n, x) => n + x.errors, 0)),
    ];
    process.stdout.write(`| ${cells.join(' | ')} |\n`);
  }
  const q = samples.get(quiet)!;
  const h = samples.get(hung)!;
  const ratios = (of: (x: HangSample) => number): number[] => h.map((x, round) => of(x) / of(q[round]!));
  const describe = (xs: number[]): string => `${median(xs).toFixed(3)} (rounds ${xs.map((x) => x.toFixed(3)).join(', ')})`;
  process.stdout.write(`\nhanging / quiet, same rounds: req/s ${describe(ratios((x) => x.rps))}, goal >= 0.9; p99 ${describe(ratios((x) => x.p99Ms))}; ` +
    `CPU per answer ${describe(ratios((x) => x.cpuUs))}\n`);
}

/** One message of the other partner in the third row. */
interface OtherMessage {
  /** From the import's `commit` to the receiver reading the request's head; null if it did not arrive in time. */
  readonly ms: number | null;
  /** Attempts at the hanging endpoints that ended between the import's start and the arrival (or the give-up). */
  readonly hangingEnded: number;
  /** Requests the hanging receivers held, steady, when the import began. */
  readonly held: number;
}

async function otherPartner(setup: Setup): Promise<void> {
  const { context, db } = setup;
  const held = new Set<ServerResponse>();
  let hangingEnded = 0;
  const receivers = await Promise.all(Array.from({ length: HANGING_ENDPOINTS }, () => receiver((request, response) => {
    held.add(response);
    response.on('close', () => {
      held.delete(response);
      hangingEnded += 1;
    });
    request.resume();
  })));
  const arrivals: Arrival[] = [];
  const other = await receiver((request, response) => {
    const at = performance.now();
    request.resume();
    request.on('end', () => {
      response.writeHead(204).end();
      arrivals.push({ at, headers: request.headers as Record<string, string>, body: '' });
    });
  });
  try {
    const hostile = 'hooks-hostile';
    const quietPartner = 'hooks-other';
    for (const partnerId of [hostile, quietPartner]) await setup.imports.next(partnerId);
    await db.deleteFrom('webhook_messages').execute(); // an empty outbox: what an earlier row left is not this row's
    for (const hook of receivers) await addEndpoint(db, hostile, hook.url);
    await addEndpoint(db, quietPartner, other.url);
    for (let i = 0; i < HANGING_BACKLOG_IMPORTS; i += 1) await setup.imports.next(hostile);
    process.stdout.write(`\n${OTHER_PARTNER_ROW}: ${HANGING_BACKLOG_IMPORTS} imports queued for a partner's ${HANGING_ENDPOINTS} endpoints that never answer ` +
      `(${HANGING_BACKLOG_IMPORTS * HANGING_ENDPOINTS} deliveries) before one instance starts (production settings, WEBHOOK_TIMEOUT_MS and WEBHOOK_CONCURRENCY at their defaults, 15 s and 16); ` +
      `once the hanging receivers hold steady, ${OTHER_PARTNER_MESSAGES} imports of another partner one after another, each after a random pause of 0 to ${DEFAULT_POLL_MS} ms, ` +
      `its one endpoint answering 204\n`);
    // The instance has given the hanging endpoints every slot it will once their count of held
    // requests stays still for a few polls: each message is queued then, as in the attack.
    const steadyHeld = async (): Promise<number> => {
      let last = -1;
      let since = performance.now();
      while (held.size === 0 || held.size !== last || performance.now() - since < SETTLED_FOR_MS) {
        if (held.size !== last) {
          last = held.size;
          since = performance.now();
        }
        await sleep(10);
      }
      return held.size;
    };
    const results = await withServer(context.serviceScript, setup.env, async () => {
      const done: OtherMessage[] = [];
      const ids = new Set<string>();
      for (let i = 0; i < OTHER_PARTNER_MESSAGES; i += 1) {
        const steady = await steadyHeld();
        await sleep(Math.random() * DEFAULT_POLL_MS);
        const seen = arrivals.length;
        const endedBefore = hangingEnded;
        const committed = await setup.imports.next(quietPartner);
        let arrival: Arrival | undefined;
        for (const deadline = committed + OTHER_ARRIVAL_TIMEOUT_MS; arrival === undefined && performance.now() < deadline;) {
          arrival = arrivals.slice(seen).find((a) => !ids.has(a.headers['webhook-id'] ?? ''));
          if (arrival === undefined) await sleep(5);
        }
        if (arrival !== undefined) ids.add(arrival.headers['webhook-id'] ?? '');
        done.push({ ms: arrival === undefined ? null : arrival.at - committed, hangingEnded: hangingEnded - endedBefore, held: steady });
        process.stdout.write(`  message ${i + 1}: queued while the hanging receivers held ${steady}; ${arrival === undefined ? 'not arrived' : `arrived ${(arrival.at - committed).toFixed(1)} ms after the commit`}, ` +
          `${hangingEnded - endedBefore} hanging attempts ended meanwhile\n`);
      }
      return done;
    });
    const ms = results.flatMap((r) => (r.ms === null ? [] : [r.ms]));
    const header = ['messages', 'requests the hanging receivers held when each was queued', 'from the commit to the other partner\'s receiver: p50 ms', 'max ms', 'min ms', 'within 2 s',
      'waited for a hanging attempt to end', 'not in 40 s'];
    process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
    const cells = [
      String(results.length), [...new Set(results.map((r) => r.held))].join(', '), ms.length === 0 ? '-' : percentile(ms, 50).toFixed(1), ms.length === 0 ? '-' : Math.max(...ms).toFixed(1),
      ms.length === 0 ? '-' : Math.min(...ms).toFixed(1), `${ms.filter((x) => x <= 2_000).length} of ${results.length}`,
      `${results.filter((r) => r.hangingEnded > 0).length} of ${results.length}`, String(results.filter((r) => r.ms === null).length),
    ];
    process.stdout.write(`| ${cells.join(' | ')} |\n`);
    process.stdout.write('(from the moment the import\'s `commit` was answered to the other partner\'s receiver reading the request\'s head, both on this process\'s clock; ' +
      'the contract: a first attempt within 2 s of the commit, whatever another partner\'s receivers do)\n');
  } finally {
    await other.close();
    for (const hook of receivers) await hook.close();
  }
}
