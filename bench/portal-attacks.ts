/**
 * The portal attacked as a hostile client would, against the service as `npm start` runs it (memory
 * storage, portal on) with 4,096 descriptors (prlimit), printing what the attacks did to the API:
 *
 *   npm run bench:portal -- [--checkout <dir>] [--only idle,pipeline,signin,body]
 *
 * --checkout runs another checkout's src/main.ts (for figures before a change); the default is this one.
 * - idle: 6,000 connections to the portal from 8 addresses that send nothing, each reopened 100 ms
 *   after the server closes it; meanwhile 20 API requests, each on a fresh connection (5 s timeout).
 * - pipeline: 100 sockets from one address pipelining GET /portal/login and never reading, 15 s;
 *   meanwhile an API request every 100 ms; the service's RSS before and at its peak.
 * - signin: 16 concurrent sign-in loops with fresh emails from one address; a real admin signing in
 *   from another address meanwhile; API throughput (autocannon, 4 connections, 5 s) in alternating
 *   rounds, quiet and flooded.
 * - body: a POST to the portal declaring 10 GB, sent as fast as it is read: the answer, how long the
 *   connection lives after it, and what was read after it.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  exchangeOnce, getOnce, hugeBody, idleCrowd, openForm, postForm, rssMb, startServiceUnderAttack, type Answered, type ServiceUnderAttack,
} from '../test/support/hostile-clients.js';
import { outputOf } from './child-output.js';
import { median, percentile } from './percentile.js';

const { values } = parseArgs({ options: { checkout: { type: 'string', default: '.' }, only: { type: 'string', default: 'idle,pipeline,signin,body' } } });
const checkout = resolve(values.checkout);
const only = new Set(values.only.split(','));
const OPEN_FILES = 4_096;
const ATTACKER = '127.0.0.2';
const ADMIN_ADDRESS = '127.0.0.3';
const ADMIN = { email: 'admin@demo.example', password: 'correct horse battery staple' };
const print = (line: string): void => void process.stdout.write(`${line}\n`);
const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A fresh service for one attack; no rate limit on the API, so throughput is the server's. */
async function withService(use: (service: ServiceUnderAttack) => Promise<void>): Promise<void> {
  const service = await startServiceUnderAttack({ checkout, openFiles: OPEN_FILES, env: { RATE_LIMIT_PER_MINUTE: '1000000000' } });
  try {
    await use(service);
  } finally {
    await service.stop();
  }
}

function summary(answers: readonly Answered[]): string {
  const answered = answers.filter((a): a is { status: number; ms: number } => 'status' in a);
  const failures = answers.filter((a): a is { failure: string; ms: number } => 'failure' in a).map((a) => a.failure);
  const ms = answered.map((a) => a.ms).sort((a, b) => a - b);
  return `${answered.length} of ${answers.length} answered (${[...new Set(answered.map((a) => a.status))].join(', ') || 'none'})` +
    (failures.length === 0 ? '' : `, failed: ${[...new Set(failures)].join(', ')}`) +
    (ms.length === 0 ? '' : `; latency p50 ${percentile(ms, 50)} ms, max ${ms.at(-1)} ms`);
}

async function apiRequests(service: ServiceUnderAttack, count: number, everyMs: number): Promise<Answered[]> {
  const answers: Answered[] = [];
  for (let i = 0; i < count; i += 1) {
    answers.push(await getOnce(`${service.apiUrl}/api/v1/public/sku/TENT-2P`, { 'X-API-Key': service.key }, 5_000));
    await wait(everyMs);
  }
  return answers;
}

async function idle(): Promise<void> {
  await withService(async (service) => {
    const { port } = new URL(service.portalUrl);
    const addresses = Array.from({ length: 8 }, (_, i) => `127.0.1.${i + 1}`);
    const crowd = idleCrowd({ host: '127.0.0.1', port: Number(port), addresses, count: 6_000, reopenAfterMs: 100 });
    await wait(3_000);
    const answers = await apiRequests(service, 20, 200);
    crowd.stop();
    print(`idle: 6,000 idle portal connections from 8 addresses (reopened when closed): the crowd held at most ${crowd.mostOpen} open, ` +
      `the server closed ${crowd.closedByServer}; API: ${summary(answers)}`);
  });
}

async function pipeline(): Promise<void> {
  await withService(async (service) => {
    const { port } = new URL(service.portalUrl);
    const pid = service.child.pid!;
    await apiRequests(service, 20, 0);
    const before = rssMb(pid);
    let peak = before;
    const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)); }, 250);
    const attacker = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'pipeline-attacker.ts'), '127.0.0.1', port, '100', '15', ATTACKER, '/portal/login'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    attacker.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    const done = new Promise((r) => attacker.once('exit', r));
    while (!out.startsWith('attacking')) await wait(50);
    const started = performance.now();
    const answers: Answered[] = [];
    let slowest = { at: 0, ms: 0 };
    while (performance.now() - started < 15_000 && peak < 3_000) {
      const at = Math.round(performance.now() - started);
      const answer = await getOnce(`${service.apiUrl}/api/v1/public/sku/TENT-2P`, { 'X-API-Key': service.key }, 5_000);
      if (answer.ms > slowest.ms) slowest = { at, ms: answer.ms };
      answers.push(answer);
      await wait(100);
    }
    if (peak >= 3_000) attacker.kill('SIGKILL');
    await done;
    clearInterval(sampler);
    const counts = out.slice(out.indexOf('\n') + 1);
    print(`pipeline: 100 non-reading sockets pipelining GET /portal/login from one address, 15 s: RSS ${before} MB before, peak ${peak} MB (+${peak - before}); ` +
      `API: ${summary(answers)}, the slowest asked ${slowest.at} ms into the attack; attacker: ${counts}`);
  });
}

async function throughput(service: ServiceUnderAttack, seconds: number): Promise<number> {
  const file = join(tmpdir(), `portal-attacks-${process.pid}.json`);
  writeFileSync(file, JSON.stringify({
    url: service.apiUrl, connections: 4, duration: seconds, requests: [{ method: 'GET', path: '/api/v1/public/sku/TENT-2P', headers: { 'X-API-Key': service.key } }],
  }));
  const r = JSON.parse(await outputOf([process.execPath, join(import.meta.dirname, 'autocannon-runner.mjs'), file])) as { requests: { average: number } };
  return r.requests.average;
}

async function signin(): Promise<void> {
  await withService(async (service) => {
    const invite = await openForm(service.invitation);
    const created = await postForm(service.invitation, invite, { password: ADMIN.password, confirm: ADMIN.password });
    if (created.status !== 303) throw new Error(`the demo admin could not be created: ${created.status}`);
    const login = `${service.portalUrl}/portal/login`;
    const quiet: number[] = [];
    const flooded: number[] = [];
    const statuses: Record<number, number> = {};
    const adminMs: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      quiet.push(await throughput(service, 5));
      let flooding = true;
      let n = 0;
      const loop = async (): Promise<void> => {
        const form = await openForm(login, ATTACKER);
        while (flooding) {
          n += 1;
          const answer = await postForm(login, form, { email: `flood-${round}-${n}@attacker.example`, password: 'wrong password, long enough' }, ATTACKER).catch(() => ({ status: 0 }));
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        }
      };
      const loops = Array.from({ length: 16 }, loop);
      await wait(1_000);
      const admin = (async () => {
        const form = await openForm(login, ADMIN_ADDRESS);
        const answer = await postForm(login, form, ADMIN, ADMIN_ADDRESS);
        adminMs.push(`${answer.status} in ${answer.ms} ms`);
      })();
      flooded.push(await throughput(service, 5));
      await admin;
      flooding = false;
      await Promise.all(loops);
    }
    print(`signin: 16 concurrent sign-in loops with fresh emails from one address: answers ${JSON.stringify(statuses)}; ` +
      `the real admin from another address: ${adminMs.join(', ')}; API req/s quiet ${quiet.map(Math.round).join(', ')}, flooded ${flooded.map(Math.round).join(', ')}: ` +
      `flooded over quiet ${(median(flooded) / median(quiet)).toFixed(2)} (medians)`);
  });
}

async function body(): Promise<void> {
  await withService(async (service) => {
    const { port } = new URL(service.portalUrl);
    const outcome = await hugeBody({ host: '127.0.0.1', port: Number(port), path: '/portal/nothing', hostHeader: `127.0.0.1:${port}`, declaredBytes: 10_000_000_000, forMs: 10_000 });
    const healthy = await exchangeOnce(`${service.apiUrl}/healthz`);
    print(`body: POST declaring 10 GB to the portal: answered ${outcome.status}, connection ended ${outcome.closedAfterAnswerMs === null ? 'not within 10 s' : `${outcome.closedAfterAnswerMs} ms`} after the answer, ` +
      `${(outcome.bytesAfterAnswer / 1e6).toFixed(1)} MB sent after the answer; API /healthz ${healthy.status}`);
  });
}

print(`portal attacks on ${checkout}, ${OPEN_FILES} descriptors, memory storage`);
for (const [name, run] of [['idle', idle], ['pipeline', pipeline], ['signin', signin], ['body', body]] as const) {
  if (only.has(name)) await run();
}
