/**
 * The batch row's client: the requests of a JSON file, each once, `concurrency` at a time on
 * keep-alive connections, answers read whole and dropped. Runs as its own process, so it can be
 * pinned to the load core, and prints the run's milliseconds and answers by status as JSON.
 *
 * Usage: batch-client.ts <file holding { base, concurrency, requests: [{ path, key }] }>
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

interface Plan {
  readonly base: string;
  readonly concurrency: number;
  readonly requests: readonly { readonly path: string; readonly key: string }[];
}

const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Plan;
const agent = new Agent({ keepAlive: true, maxSockets: plan.concurrency });
const statuses: Record<string, number> = {};

function ask(path: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${plan.base}${path}`, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => {
        statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
        resolve();
      });
    });
    req.on('error', reject);
    req.end();
  });
}

let next = 0;
const started = performance.now();
await Promise.all(Array.from({ length: plan.concurrency }, async () => {
  while (next < plan.requests.length) {
    const { path, key } = plan.requests[next++]!;
    await ask(path, key);
  }
}));
process.stdout.write(JSON.stringify({ ms: performance.now() - started, statuses }));
agent.destroy();
