import { join } from 'node:path';
import { outputOf } from './child-output.js';
import { ATTACKER_ADDRESS, LEGIT_ADDRESS } from './client-addresses.js';
import { askPaced, type PacedResult } from './paced-client.js';
import { percentile } from './percentile.js';
import { sampleRss } from './rss-sampler.js';
import { freePort, onLoadCore, rssMb, startServer, waitUntilUp } from './server-process.js';
import type { BenchContext } from './target.js';

const ATTACK_SOCKETS = 200;
const LEGIT_REQUESTS = 100;
const LEGIT_TIMEOUT_MS = 5_000;
const RSS_EVERY_MS = 250;
/** Past this the attack is stopped early: the point is made, and the machine is shared. */
const RSS_CAP_MB = 4_096;
/** How long after the attack the "after" reading is taken. */
const SETTLE_MS = 3_000;

interface AttackerCounts {
  readonly opened: number;
  readonly connected: number;
  readonly closedByServer: number;
  readonly failedToConnect: number;
  readonly requestsWritten: number;
}

/**
 * 200 sockets from 127.0.0.2 writing pipelined keyless GETs and never reading, for `seconds`, while a
 * legitimate client on 127.0.0.1 makes 100 sequential requests spread over the attack (5 s timeout
 * each); the server's RSS before, at its peak (sampled every 250 ms) and 3 s after.
 */
export async function measurePipelineAttack(context: BenchContext, seconds: number): Promise<void> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = await startServer(context.serviceScript, { ...context.serviceEnv, PORT: String(port) });
  process.stdout.write(`\nnon-reading pipeline attack, memory storage: ${ATTACK_SOCKETS} sockets from ${ATTACKER_ADDRESS} writing pipelined keyless GETs and never reading, ` +
    `${seconds}s; meanwhile one valid key from ${LEGIT_ADDRESS}, ${LEGIT_REQUESTS} sequential requests spread over the attack, ${LEGIT_TIMEOUT_MS / 1000} s timeout each\n`);
  try {
    await waitUntilUp(`${base}/healthz`);
    const legit = (requests: number, everyMs: number, forMs: number): Promise<PacedResult> => askPaced({
      url: `${base}/api/v1/public/sku/${context.catalog.skus[0]!}`, key: context.catalog.keys[0]!, requests, everyMs,
      until: performance.now() + forMs, timeoutMs: LEGIT_TIMEOUT_MS, localAddress: LEGIT_ADDRESS,
    });
    await legit(200, 0, 5_000); // warm-up
    await new Promise((r) => setTimeout(r, 1_000));
    const pid = child.pid!;
    const before = rssMb(pid);

    const stopEarly = new AbortController();
    const sampler = sampleRss(pid, RSS_EVERY_MS, (mb) => {
      if (mb > RSS_CAP_MB) stopEarly.abort();
    });
    const attacker = [process.execPath, '--import', 'tsx', join(import.meta.dirname, 'pipeline-attacker.ts'), '127.0.0.1', String(port), String(ATTACK_SOCKETS), String(seconds), ATTACKER_ADDRESS];
    let attacking = (): void => undefined;
    const started = new Promise<void>((resolve) => {
      attacking = resolve;
    });
    const attack = outputOf(onLoadCore(attacker), { killAfterMs: (seconds + 30) * 1000, signal: stopEarly.signal, onOutput: (out) => out.startsWith('attacking\n') && attacking() })
      .then((out) => JSON.parse(out.slice(out.indexOf('\n') + 1)) as AttackerCounts, () => null);
    await Promise.race([started, attack]);
    const during = await legit(LEGIT_REQUESTS, (seconds * 1000) / LEGIT_REQUESTS, seconds * 1000);
    const counts = await attack;
    // A server still working through what it read keeps growing after the attacker has gone.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const after = rssMb(pid);
    const peak = Math.max(sampler.stop(), after);
    const afterwards = await legit(1, 0, LEGIT_TIMEOUT_MS);
    printAttack({ before, peak, after, during, afterwards, counts, stoppedEarly: stopEarly.signal.aborted });
  } finally {
    child.kill('SIGKILL');
  }
}

interface Figures {
  readonly before: number;
  readonly peak: number;
  readonly after: number;
  readonly during: PacedResult;
  readonly afterwards: PacedResult;
  readonly counts: AttackerCounts | null;
  readonly stoppedEarly: boolean;
}

function printAttack({ before, peak, after, during, afterwards, counts, stoppedEarly }: Figures): void {
  const ms = (x: number): string => (Number.isNaN(x) ? '-' : x.toFixed(1));
  const ok = during.statuses['200'] ?? 0;
  process.stdout.write('\n| server RSS MB before | peak (every 250 ms, to 3 s after) | growth | after (+3 s) |\n|---|---|---|---|\n');
  process.stdout.write(`| ${before} | ${peak} | ${peak - before} | ${after} |\n`);
  if (stoppedEarly) process.stdout.write(`attack stopped early: server RSS passed ${RSS_CAP_MB} MB\n`);
  process.stdout.write('\n| legitimate client | asked | answered 200 | other answers | timed out | failed | p50 ms | p99 ms | max ms | longest without an answer, s |\n|---|---|---|---|---|---|---|---|---|---|\n');
  const others = Object.entries(during.statuses).filter(([s]) => s !== '200').map(([s, n]) => `${s}: ${n}`).join(', ') || '0';
  process.stdout.write(`| during the attack | ${during.asked} (of ${LEGIT_REQUESTS}) | ${ok} | ${others} | ${during.timedOut} | ${during.failed} | ` +
    `${ms(percentile(during.latenciesMs, 50))} | ${ms(percentile(during.latenciesMs, 99))} | ${ms(percentile(during.latenciesMs, 100))} | ${(during.longestSilenceMs / 1000).toFixed(1)} |\n`);
  const probe = afterwards.latenciesMs.length === 1 ? `answered ${Object.keys(afterwards.statuses)[0]!} in ${ms(afterwards.latenciesMs[0]!)} ms` : 'not answered within 5 s';
  process.stdout.write(`\nlegitimate client kept being answered during the attack: ${ok === during.asked && during.asked > 0 ? 'yes' : 'no'} (${ok} of ${during.asked}); one request ${SETTLE_MS / 1000} s after the attack: ${probe}\n`);
  process.stdout.write(counts === null
    ? 'attacker: killed before reporting\n'
    : `attacker: ${counts.opened} sockets opened, ${counts.closedByServer} closed by the server, ${counts.failedToConnect} failed to connect, ${counts.requestsWritten} requests written\n`);
}
