/**
 * The soak's steady mix of API requests, paced at a fixed rate on keep-alive connections, each
 * answer checked against the status it should have and counted in the minute it was sent.
 */
import { Agent, request } from 'node:http';
import { madeUpKey } from '../made-up-key.js';
import { percentile } from '../percentile.js';

/** Share of each kind of request in the mix; `issued` falls back to a hot lookup while no such key is held. */
const MIX = [
  ['hot', 45], ['cold', 18], ['miss', 4], ['batch', 10], ['changes', 5], ['made-up', 8], ['issued', 10],
] as const;
type Kind = typeof MIX[number][0];
const MIX_TOTAL = MIX.reduce((sum, [, weight]) => sum + weight, 0);
const HOT_SKUS = 5;
const BATCH_SIZE = 10;
const TICK_MS = 20;
/** Requests in flight past which the client skips a send rather than queue it: the service fell behind. */
const MAX_IN_FLIGHT = 200;
const REQUEST_TIMEOUT_MS = 10_000;

/** A key issued while the soak runs (by the CLI or the portal): accepted until revoked, refused after. */
export class HeldKey {
  /** When its revocation was sent, and when the command or form that revoked it returned. */
  private revocation: { readonly sentAt: number; doneAt: number | null } | null = null;

  constructor(readonly key: string, readonly id: string) {}

  revoking(): void {
    this.revocation = { sentAt: performance.now(), doneAt: null };
  }

  revoked(): void {
    if (this.revocation !== null) this.revocation.doneAt = performance.now();
  }

  /** The revocation was refused: the key stays good. */
  notRevoked(): void {
    this.revocation = null;
  }

  /** The statuses a request sent now may get: while the revocation is under way, either. */
  expected(): readonly number[] {
    if (this.revocation === null) return [200];
    return this.revocation.doneAt === null ? [200, 401] : [401];
  }
}

/** What one minute's requests came to. */
export class MinuteOfRequests {
  /** The API requests' latencies, in ms. */
  readonly latencies: number[] = [];
  fiveXx = 0;
  unexpected = 0;
  skipped = 0;
  /** `kind status` of the unexpected answers, counted. */
  readonly surprises = new Map<string, number>();

  /** `ms` null: an answer counted for its status only (the portal's, whose sign-ins hash a password). */
  record(kind: string, status: number, ms: number | null, expected: readonly number[], failure = ''): void {
    if (ms !== null) this.latencies.push(ms);
    if (status >= 500) this.fiveXx += 1;
    if (!expected.includes(status)) {
      this.unexpected += 1;
      const what = `${kind} ${status === 0 ? `no answer (${failure})` : status}`;
      this.surprises.set(what, (this.surprises.get(what) ?? 0) + 1);
    }
  }

  get p50(): number {
    return percentile(this.latencies, 50);
  }

  get p99(): number {
    return percentile(this.latencies, 99);
  }
}

interface TrafficOptions {
  readonly api: string;
  readonly keys: readonly string[];
  readonly skus: readonly string[];
  readonly ratePerSecond: number;
  /** The minute a request sent now belongs to. */
  readonly minuteNow: () => MinuteOfRequests;
}

export class Traffic {
  /**
   * Idle connections are closed by the client after 4 s, before the service's 5 s (its Keep-Alive
   * hint): without an agent timeout, Node 20's agent ignores the hint and keeps them, and a request
   * sent on one just as the service closes it meets ECONNRESET (once in the first 16 minutes of a
   * 2-hour run), a race of the client's and no answer of the service's.
   */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 32, timeout: 4_000 });
  private readonly cursors = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private owed = 0;
  /** Keys the CLI and the portal issued, used by `issued` requests until dropped. */
  readonly heldKeys = new Set<HeldKey>();

  constructor(private readonly options: TrafficOptions) {}

  start(): void {
    const perTick = (this.options.ratePerSecond * TICK_MS) / 1_000;
    this.timer = setInterval(() => {
      this.owed += perTick;
      for (; this.owed >= 1; this.owed -= 1) this.sendOne();
    }, TICK_MS);
  }

  /** Stops sending, and waits up to the request timeout for the answers still due. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    const deadline = performance.now() + REQUEST_TIMEOUT_MS;
    while (this.inFlight > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    this.agent.destroy();
  }

  private sendOne(): void {
    const minute = this.options.minuteNow();
    if (this.inFlight >= MAX_IN_FLIGHT) {
      minute.skipped += 1;
      return;
    }
    const { kind, path, key, expected } = this.next();
    this.inFlight += 1;
    const started = performance.now();
    void this.get(path, key).then(({ status, body, failure }) => {
      this.inFlight -= 1;
      minute.record(kind, status, performance.now() - started, expected, failure);
      if (kind === 'changes' && status === 200) this.followCursor(key, body);
    });
  }

  private next(): { kind: Kind; path: string; key: string; expected: readonly number[] } {
    const { keys, skus } = this.options;
    const key = pick(keys);
    const kind = drawKind();
    switch (kind) {
      case 'hot':
        return { kind, path: skuPath(skus[Math.floor(Math.random() * HOT_SKUS)]!), key, expected: [200] };
      case 'cold':
        return { kind, path: skuPath(pick(skus)), key, expected: [200] };
      case 'miss':
        return { kind, path: skuPath(`SOAK-MISSING-${Math.floor(Math.random() * 1e9)}`), key, expected: [404] };
      case 'batch': {
        const batch = Array.from({ length: BATCH_SIZE }, () => pick(skus));
        return { kind, path: `/api/v1/public/products?sku=${batch.map(encodeURIComponent).join(',')}`, key, expected: [200] };
      }
      case 'changes': {
        const cursor = this.cursors.get(key);
        return { kind, path: `/api/v1/public/changes?limit=100${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, key, expected: [200] };
      }
      case 'made-up':
        return { kind, path: skuPath(skus[0]!), key: madeUpKey(), expected: [401] };
      case 'issued': {
        const held = [...this.heldKeys];
        if (held.length === 0) return { kind: 'hot', path: skuPath(skus[0]!), key, expected: [200] };
        const chosen = pick(held);
        return { kind, path: skuPath(pick(skus.slice(0, HOT_SKUS))), key: chosen.key, expected: chosen.expected() };
      }
    }
  }

  /** Keeps reading the feed from where the last page ended, as a partner's copy does. */
  private followCursor(key: string, body: string): void {
    try {
      const page = JSON.parse(body) as { next_cursor?: string };
      if (typeof page.next_cursor === 'string') this.cursors.set(key, page.next_cursor);
    } catch {
      this.cursors.delete(key);
    }
  }

  /** Status 0 when no answer came, and why (refused, reset, timed out). */
  private get(path: string, key: string): Promise<{ status: number; body: string; failure?: string }> {
    return new Promise((done) => {
      const req = request(`${this.options.api}${path}`, { agent: this.agent, headers: { 'X-API-Key': key }, timeout: REQUEST_TIMEOUT_MS }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => { body += chunk; });
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        res.on('error', (error: NodeJS.ErrnoException) => done({ status: 0, body: '', failure: error.code ?? error.message }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (error: NodeJS.ErrnoException) => done({ status: 0, body: '', failure: error.code ?? error.message }));
      req.end();
    });
  }
}

const skuPath = (sku: string): string => `/api/v1/public/sku/${encodeURIComponent(sku)}`;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

function drawKind(): Kind {
  let draw = Math.random() * MIX_TOTAL;
  for (const [kind, weight] of MIX) {
    draw -= weight;
    if (draw < 0) return kind;
  }
  return 'hot';
}
