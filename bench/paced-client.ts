import { Agent, request } from 'node:http';

/** What a legitimate client saw: one request at a time, at most one every `everyMs`. */
export interface PacedResult {
  readonly asked: number;
  /** Latencies of the requests answered at all, whatever the status. */
  readonly latenciesMs: readonly number[];
  readonly statuses: Readonly<Record<string, number>>;
  readonly timedOut: number;
  readonly failed: number;
  /** The longest time without an answer, counted from the start to the end of the run. */
  readonly longestSilenceMs: number;
}

export interface PacedOptions {
  readonly url: string;
  readonly key: string;
  readonly requests: number;
  readonly everyMs: number;
  /** performance.now() after which no request is started. */
  readonly until: number;
  readonly timeoutMs: number;
  readonly localAddress: string;
}

type Outcome = { status: number } | 'timed out' | 'failed';

function ask(agent: Agent, options: PacedOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request(options.url, { agent, headers: { Authorization: `Bearer ${options.key}` } }, (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0 });
      });
    });
    const timer = setTimeout(() => {
      resolve('timed out');
      req.destroy();
    }, options.timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve('failed');
    });
    req.end();
  });
}

/** A legitimate client's sequential requests, paced so that they spread over the whole of an attack. */
export async function askPaced(options: PacedOptions): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, localAddress: options.localAddress });
  const latenciesMs: number[] = [];
  const statuses: Record<string, number> = {};
  let asked = 0;
  let timedOut = 0;
  let failed = 0;
  let lastAnswer = performance.now();
  let longestSilenceMs = 0;
  try {
    while (asked < options.requests && performance.now() < options.until) {
      const started = performance.now();
      asked += 1;
      const outcome = await ask(agent, options);
      const now = performance.now();
      if (outcome === 'timed out') timedOut += 1;
      else if (outcome === 'failed') failed += 1;
      else {
        latenciesMs.push(now - started);
        statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
        longestSilenceMs = Math.max(longestSilenceMs, now - lastAnswer);
        lastAnswer = now;
      }
      const wait = started + options.everyMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    return { asked, latenciesMs, statuses, timedOut, failed, longestSilenceMs: Math.max(longestSilenceMs, performance.now() - lastAnswer) };
  } finally {
    agent.destroy();
  }
}
