/**
 * The service on MySQL + Redis, with the portal and metrics on, under a steady mix for N minutes,
 * to see whether anything grows:
 *
 *   npm run soak -- --minutes N [--rate <requests/s>] [--products <n>]
 *
 * Everything is the soak's own: a database (migrated, the bench catalog imported), a redis-server
 * on a free port, the service (src/main.ts under tsx), and a webhook receiver in this process with
 * the bench partner's endpoint registered. The mix: hot, cold and missing SKUs, batches, the changes
 * feed, made-up keys (401), keys the CLI and the portal issue and revoke; beside it an import every
 * 2 minutes through the CLI (one product's title changed each time), a key issued and revoked through
 * the CLI every minute, a portal visit (sign-in, key revoked and made, test event, sign-out) every 30 s,
 * Redis killed and started again at a third of the run and every database connection cut at two
 * thirds. Each minute prints one line; the end prints each figure's slope over the last two thirds
 * and the verdict, and exits 0 when flat, 1 otherwise. Everything is removed at the end, and on Ctrl-C.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeBenchCatalog } from './bench-catalog.js';
import { DescriptorSampler } from './soak/soak-descriptors.js';
import { HEADER, minuteLine, p99Bound, report, scrape, type MinuteFigures } from './soak/soak-figures.js';
import { SoakOperations } from './soak/soak-operations.js';
import { PortalAdmin } from './soak/soak-portal.js';
import { noneReceived, SoakReceiver, type ReceivedCounts } from './soak/soak-receiver.js';
import { SoakCli, SoakDatabase, SoakRedis, startSoakService, type SoakService } from './soak/soak-stack.js';
import { MinuteOfRequests, Traffic } from './soak/soak-traffic.js';

const MINUTE_MS = 60_000;
const CATALOG_KEYS = 100;
const ADMIN_EMAIL = 'soak-admin@bench.example';
/** A minute is a blip's when it overlaps the blip or the few seconds after it. */
const BLIP_MARGIN_MS = 5_000;
/** How long after a minute ends its line waits for the answers to its last requests. */
const STRAGGLERS_MS = 2_000;

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, rate: { type: 'string', default: '200' }, products: { type: 'string', default: '10000' } } });
const [minutes, rate, products] = [Number(values.minutes), Number(values.rate), Number(values.products)];
if (![minutes, rate, products].every((n) => Number.isInteger(n) && n > 0) || minutes < 3) {
  process.stderr.write('usage: npm run soak -- --minutes N (3 or more) [--rate <requests/s>] [--products <n>]\n');
  process.exit(2);
}

const print = (line: string): void => void process.stdout.write(`${line}\n`);
const interrupted = new AbortController();
const sleep = (ms: number): Promise<void> => new Promise((resolve, reject) => {
  if (interrupted.signal.aborted) return reject(new Error('interrupted'));
  const onAbort = (): void => {
    clearTimeout(timer);
    reject(new Error('interrupted'));
  };
  const timer = setTimeout(() => {
    interrupted.signal.removeEventListener('abort', onAbort);
    resolve();
  }, ms);
  interrupted.signal.addEventListener('abort', onAbort, { once: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    print(`\n${signal}: stopping and cleaning up`);
    interrupted.abort();
  });
}

/** Undone last first, whatever happened. */
const cleanups: Array<() => unknown> = [];
async function cleanUp(): Promise<void> {
  for (const undo of cleanups.reverse()) {
    try {
      await undo();
    } catch (error) {
      print(`cleanup: ${(error as Error).message}`);
    }
  }
}

async function soak(): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'pcat-soak-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const base = writeBenchCatalog(join(dir, 'catalog.json'), products, CATALOG_KEYS);
  const retitled = join(dir, 'catalog-retitled.json');
  writeBenchCatalog(retitled, products, CATALOG_KEYS, (i) => (i === 0 ? 'Bench product 0, retitled' : undefined));

  const perMinute: Array<{ requests: MinuteOfRequests; received: ReceivedCounts }> = [];
  let startedAt = Number.NaN;
  const minuteNow = (): { requests: MinuteOfRequests; received: ReceivedCounts } => {
    const index = Number.isNaN(startedAt) ? 0 : Math.floor((performance.now() - startedAt) / MINUTE_MS);
    while (perMinute.length <= index) perMinute.push({ requests: new MinuteOfRequests(), received: noneReceived() });
    return perMinute[index]!;
  };

  const receiver = await SoakReceiver.start(() => minuteNow().received);
  cleanups.push(() => receiver.close());
  const redis = await SoakRedis.start();
  cleanups.push(() => redis.stop());
  const setupStarted = performance.now();
  const database = await SoakDatabase.open(base.file);
  cleanups.push(() => database.drop());
  const env = { STORAGE: 'mysql', DATABASE_URL: database.url, RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
  const cli = new SoakCli(env);
  cleanups.push(() => cli.killAll());
  const endpoint = await cli.json<{ id: string; secret: string }>(['webhooks', 'add', '--partner', 'bench', '--url', receiver.url, '--description', 'soak receiver']);
  receiver.useSecret(endpoint.secret);
  const invitation = await cli.json<{ invite_url: string }>(['admins', 'invite', '--partner', 'bench', '--email', ADMIN_EMAIL]);

  const service: SoakService = await startSoakService({
    ...env, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000', AUTH_FAILURES_PER_MINUTE: '1000000000', MAX_CONNECTIONS_PER_ADDRESS: '100',
  });
  cleanups.push(() => service.stop());
  const descriptors = new DescriptorSampler(service.pid);
  cleanups.push(() => descriptors.stop());
  print(`soak: ${minutes} min at ${rate} requests/s; database ${database.name} (${products} products, ${CATALOG_KEYS} keys), redis-server on ${redis.port}, ` +
    `service (src/main.ts under tsx) pid ${service.pid} at ${service.api}, portal ${service.portal}, metrics ${service.metrics}, webhook receiver ${receiver.url}; ` +
    `ready ${((performance.now() - setupStarted) / 1_000).toFixed(1)} s after the database was created`);
  print('the service exports no array-buffer figure (prom-client gives heap, external memory and the rest, not process.memoryUsage().arrayBuffers)');

  const traffic = new Traffic({ api: service.api, keys: base.keys, skus: base.skus, ratePerSecond: rate, minuteNow: () => minuteNow().requests });
  cleanups.push(() => traffic.stop());
  const portal = new PortalAdmin(service.portal, ADMIN_EMAIL, endpoint.id, (what, status, expected) => minuteNow().requests.record(what, status, null, expected));
  await portal.acceptInvitation(decodeURIComponent(new URL(invitation.invite_url).pathname.split('/').at(-1)!));

  const clock = (): string => {
    const s = Math.floor((performance.now() - startedAt) / 1_000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  };
  const operations = new SoakOperations({
    cli, traffic, portal, redis, database, catalogFiles: [base.file, retitled], sleep, event: (line) => print(`  [${clock()}] ${line}`),
  });
  const runMs = minutes * MINUTE_MS;
  const loops: Array<Promise<void>> = [];
  /** Runs `task` at `firstMs` after the start and then every `everyMs`, one at a time, until the run ends. */
  const every = (firstMs: number, everyMs: number, task: () => Promise<void>): void => {
    loops.push((async () => {
      try {
        for (let at = firstMs; at < runMs; at += everyMs) {
          await sleep(Math.max(0, startedAt + at - performance.now()));
          await task().catch((error: unknown) => print(`  [${clock()}] ${(error as Error).message}`));
        }
      } catch {
        // interrupted
      }
    })());
  };

  // A first scrape starts the minutes' windows: the duration histogram's counts and the event-loop delay's.
  let bucketsBefore = (await scrape(service.metrics)).apiBuckets;
  descriptors.takeLeast();
  print(HEADER);
  startedAt = performance.now();
  traffic.start();
  every(40_000, 2 * MINUTE_MS, () => operations.importOnce());
  every(20_000, MINUTE_MS, () => operations.keyCycle());
  every(10_000, 30_000, () => operations.portalVisit());
  every(runMs / 3 + 10_000, runMs, () => operations.restartRedis());
  every((2 * runMs) / 3 + 10_000, runMs, () => operations.cutDatabase());

  const lines: MinuteFigures[] = [];
  for (let minute = 1; minute <= minutes; minute += 1) {
    await sleep(startedAt + minute * MINUTE_MS - performance.now());
    const { figures, apiBuckets } = await scrape(service.metrics);
    const serviceP99Ms = p99Bound(bucketsBefore, apiBuckets);
    bucketsBefore = apiBuckets;
    await sleep(STRAGGLERS_MS);
    const { requests, received } = perMinute[minute - 1] ?? { requests: new MinuteOfRequests(), received: noneReceived() };
    const [from, to] = [startedAt + (minute - 1) * MINUTE_MS, startedAt + minute * MINUTE_MS];
    const blips = operations.blips.filter((b) => b.startedAt < to && (Number.isNaN(b.endedAt) ? performance.now() : b.endedAt) + BLIP_MARGIN_MS > from).map((b) => b.name);
    const line: MinuteFigures = {
      ...figures, openFds: descriptors.takeLeast(), minute, requests: requests.latencies.length, p50Ms: requests.p50, p99Ms: requests.p99, serviceP99Ms, fiveXx: requests.fiveXx, unexpected: requests.unexpected,
      hooks: received.verified, blips,
    };
    lines.push(line);
    print(minuteLine(line));
    if (requests.surprises.size > 0 || requests.skipped > 0 || received.unverified > 0) {
      const notes = [...[...requests.surprises].map(([what, n]) => `${what} x${n}`), ...(requests.skipped > 0 ? [`skipped (200 in flight) x${requests.skipped}`] : []),
        ...(received.unverified > 0 ? [`webhooks unverified x${received.unverified}`] : [])];
      print(`      ${notes.join(', ')}`);
    }
  }
  await traffic.stop();
  await Promise.all(loops);

  const received = perMinute.map((m) => m.received);
  const types = new Map<string, number>();
  for (const r of received) for (const [type, n] of r.types) types.set(type, (types.get(type) ?? 0) + n);
  const { counts } = operations;
  print('');
  print(`operations: ${counts.imports} imports (${counts.importsFailed} failed), ${counts.keysIssued} keys issued and ${counts.keysRevoked} revoked through the CLI ` +
    `(${counts.cliFailures} CLI failures), ${counts.portalVisits} portal visits making ${counts.portalKeysMade} keys; webhooks received: ` +
    `${received.reduce((s, r) => s + r.verified, 0)} verified (${[...types].map(([type, n]) => `${type} ${n}`).join(', ') || 'none'}), ` +
    `${received.reduce((s, r) => s + r.unverified, 0)} unverified, ${received.reduce((s, r) => s + r.again, 0)} again`);
  return report(lines, print);
}

let code: number;
try {
  code = (await soak()) ? 0 : 1;
} catch (error) {
  code = interrupted.signal.aborted ? 130 : 1;
  if (!interrupted.signal.aborted) print(`soak: ${(error as Error).stack ?? String(error)}`);
} finally {
  await cleanUp();
}
process.exit(code!);
