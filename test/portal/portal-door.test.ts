import { expect } from 'chai';
import { SIGN_IN_ADDRESS_ALLOWANCE } from '../../src/domain/admin.js';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  exchangeOnce, getOnce, hugeBody, idleCrowd, openForm, postForm, rssMb, startServiceUnderAttack, type Answered, type ServiceUnderAttack,
} from '../support/hostile-clients.js';

/** See test/http/pipeline-flood.test.ts: from Node.js 22 on, V8 lets the same live heap peak higher. */
const GROWTH_BUDGET_MB = Number(process.versions.node.split('.')[0]) >= 22 ? 250 : 150;
const ROOT = join(import.meta.dirname, '..', '..');
const wait = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const statuses = (answers: readonly Answered[]): (number | string)[] => answers.map((a) => ('status' in a ? a.status : a.failure));

/**
 * The portal attacked while the API serves, on the service as `npm start` runs it with 4,096
 * descriptors (prlimit): the API must keep answering. Figures are printed; npm run bench:portal
 * measures the same attacks at full length.
 */
describe('the portal\'s door, attacked, on npm start with 4,096 descriptors', function () {
  this.timeout(120_000);
  let service: ServiceUnderAttack;
  before(async function () {
    service = await startServiceUnderAttack({ checkout: ROOT, openFiles: 4_096, env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  });
  after(async function () {
    await service.stop();
  });
  const lookup = (): Promise<Answered> => getOnce(`${service.apiUrl}/api/v1/public/sku/TENT-2P`, { 'X-API-Key': service.key }, 5_000);

  it('answers every API request while 6,000 connections from 8 addresses sit idle at the portal, reopening as they are closed', async function () {
    const { port } = new URL(service.portalUrl);
    const crowd = idleCrowd({ host: '127.0.0.1', port: Number(port), addresses: Array.from({ length: 8 }, (_, i) => `127.0.3.${i + 1}`), count: 6_000, reopenAfterMs: 100 });
    const answers: Answered[] = [];
    try {
      await wait(2_000);
      for (let i = 0; i < 20; i += 1) answers.push(await lookup());
    } finally {
      crowd.stop();
    }
    process.stdout.write(`      crowd: at most ${crowd.mostOpen} open, ${crowd.closedByServer} closed by the server; API: ${statuses(answers).join(' ')}\n`);
    expect(statuses(answers)).to.deep.equal(Array(20).fill(200));
  });

  it('answers the API and stays within its memory budget while 100 sockets pipeline the sign-in page without reading', async function () {
    const { port } = new URL(service.portalUrl);
    const pid = service.child.pid!;
    const before = rssMb(pid);
    let peak = before;
    const sampler = setInterval(() => { peak = Math.max(peak, rssMb(pid)); }, 250);
    const attacker = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'pipeline-attacker.ts'), '127.0.0.1', port, '100', '8', '127.0.3.20', '/portal/login'], { stdio: 'ignore' });
    const answers: Answered[] = [];
    try {
      const started = performance.now();
      while (performance.now() - started < 8_000) {
        answers.push(await lookup());
        await wait(100);
      }
    } finally {
      attacker.kill('SIGKILL');
      clearInterval(sampler);
    }
    const slowest = Math.max(...answers.map((a) => a.ms));
    process.stdout.write(`      RSS ${before} MB before, ${peak} MB at the peak; ${answers.length} API requests, the slowest ${slowest} ms\n`);
    expect(answers.every((a) => 'status' in a && a.status === 200), JSON.stringify(statuses(answers))).to.equal(true);
    expect(peak - before).to.be.below(GROWTH_BUDGET_MB);
  });

  it('refuses a one-address sign-in flood 429 by address while a real admin signs in from another', async function () {
    const invite = await openForm(service.invitation);
    const password = 'correct horse battery staple';
    expect((await postForm(service.invitation, invite, { password, confirm: password })).status).to.equal(303);
    const login = `${service.portalUrl}/portal/login`;
    const seen: Record<number, number> = {};
    let flooding = true;
    let n = 0;
    const loop = async (): Promise<void> => {
      const form = await openForm(login, '127.0.3.30');
      while (flooding) {
        n += 1;
        const answer = await postForm(login, form, { email: `flood-${n}@attacker.example`, password: 'not the password at all' }, '127.0.3.30');
        seen[answer.status] = (seen[answer.status] ?? 0) + 1;
        if (answer.status === 429) expect(Number(answer.headers['retry-after'])).to.be.above(0);
      }
    };
    const loops = Array.from({ length: 16 }, loop);
    await wait(3_000);
    const form = await openForm(login, '127.0.3.31');
    const admin = await postForm(login, form, { email: 'admin@demo.example', password }, '127.0.3.31');
    flooding = false;
    await Promise.all(loops);
    process.stdout.write(`      flood answers ${JSON.stringify(seen)}; the admin: ${admin.status} in ${admin.ms} ms\n`);
    expect(admin.status).to.equal(303);
    expect(seen[429]).to.be.above(0);
    // Only the address's allowance of passwords was tried; the rest were refused before a hash, 429,
    // or, past 16 connections from the address at once, 503 by the listener.
    expect(seen[401] ?? 0).to.be.at.most(SIGN_IN_ADDRESS_ALLOWANCE.attempts);
    expect(Object.keys(seen).map(Number).every((status) => [401, 429, 503].includes(status)), JSON.stringify(seen)).to.equal(true);
    expect((await lookup() as { status: number }).status).to.equal(200);
  });

  it('ends a connection declaring 10 GB at the portal once answered, reading nothing after', async function () {
    const { port } = new URL(service.portalUrl);
    const outcome = await hugeBody({ host: '127.0.0.1', port: Number(port), path: '/portal/nothing', hostHeader: `127.0.0.1:${port}`, declaredBytes: 10_000_000_000, forMs: 10_000 });
    process.stdout.write(`      answered ${outcome.status}, ended ${outcome.closedAfterAnswerMs} ms after the answer, ${outcome.bytesAfterAnswer} bytes sent after it\n`);
    expect(outcome.status).to.equal(404);
    expect(outcome.closedAfterAnswerMs).to.not.equal(null);
    expect(outcome.bytesAfterAnswer).to.be.below(64 * 1024 * 1024);
    expect((await exchangeOnce(`${service.apiUrl}/healthz`)).status).to.equal(200);
  });
});
