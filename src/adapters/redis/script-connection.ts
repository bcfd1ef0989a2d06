import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';

export interface ScriptConnectionOptions {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS; never logged, since it may carry a password. */
  readonly url: string;
  /** With `rediss://`: how the server's certificate is verified (redis-client.ts, `redisTls`). */
  readonly tls?: ConnectionOptions | undefined;
  /** The Lua script every call runs. */
  readonly script: string;
  /**
   * How long a call may wait for its answer, connecting included, before it is given up: it rejects
   * with a SlowReplyError and the connection stays, its late reply dropped when it comes.
   */
  readonly timeoutMs: number;
  /**
   * How long the connection may answer nothing at all while calls wait before it is dropped and every
   * waiting call rejects: Redis is lost. Defaults to `timeoutMs`.
   */
  readonly lostAfterMs?: number;
}

/** A call given up after `timeoutMs` with nothing wrong seen on the connection: Redis may only be slow. */
export class SlowReplyError extends Error {}

interface Pending {
  /** When the call was sent, on the waiting clock (see `waited`). */
  readonly at: number;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: Error) => void;
  /** The call's keys and arguments, kept to send it again as EVAL if Redis no longer has the script. */
  readonly words: readonly string[] | null;
}

type Reply = string | number | null | Error | Reply[];

const CRLF = '\r\n';
const CR = 13;

/**
 * One connection to Redis that runs one Lua script, for the request path. A general client
 * (ioredis) spends 9 to 11 µs of CPU a call building, tracking and parsing a command, where this
 * one takes 4 to 6: it writes the few bytes of an EVALSHA, and parses the small replies in place.
 * Everything else stays with ioredis.
 *
 * The calls made in one callback go in one write, at the callback's end. Its caller gathers what
 * a loop turn asks into one call (request-round-trip.ts), so it need not wait for anything itself.
 *
 * Failures are the caller's to handle. A call not answered within `timeoutMs` rejects with a
 * SlowReplyError and nothing else happens: Redis may be slow for a moment. When the connection fails
 * or closes, or has answered nothing for `lostAfterMs` while calls wait, every call waiting on it
 * rejects and the connection is dropped (one that stops answering never recovers by itself); the
 * next call opens a new one.
 *
 * Waiting is timed on a clock that leaves out the time this process could not read a reply: a sweep
 * every quarter of the shorter bound adds the time since the last sweep, but never more than two
 * periods. A loop held up by this process's own work, or a process the machine did not run, would
 * otherwise find a reply that sat unread in its socket "late", and take a busy moment for a lost Redis.
 */
export class ScriptConnection {
  private readonly sha: string;
  private readonly script: string;
  private readonly timeoutMs: number;
  private readonly lostAfterMs: number;
  private readonly sweepMs: number;
  private readonly target: { host: string; port: number; hello: string[] };
  private readonly tls: ConnectionOptions | undefined;
  private socket: Socket | null = null;
  private connected = false;
  private readonly pending: Pending[] = [];
  private unsent: string[] = [];
  private flushing = false;
  private rest: Buffer | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;
  /** The waiting clock at the last sweep: milliseconds waited that count against Redis. */
  private waited = 0;
  private lastSweep = 0;
  /** The waiting clock when the connection last delivered a reply. */
  private lastHeard = 0;
  /** How many calls at the head of `pending` were given up: their replies are dropped when they come. */
  private givenUp = 0;

  constructor(options: ScriptConnectionOptions) {
    this.script = options.script;
    this.sha = createHash('sha1').update(options.script).digest('hex');
    this.timeoutMs = options.timeoutMs;
    this.lostAfterMs = options.lostAfterMs ?? options.timeoutMs;
    this.sweepMs = Math.max(10, Math.min(this.timeoutMs, this.lostAfterMs) / 4);
    this.target = parseRedisUrl(options.url);
    this.tls = options.tls;
  }

  /** Runs the script with these keys and arguments; resolves with its reply. */
  run(keys: readonly string[], args: readonly string[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('Redis connection closed'));
    const words = [String(keys.length), ...keys, ...args];
    // EVALSHA <sha> <words>, written out directly: this runs once a loop turn under load.
    let text = `*${words.length + 2}${CRLF}$7${CRLF}EVALSHA${CRLF}$40${CRLF}${this.sha}${CRLF}`;
    for (const word of words) text += `$${Buffer.byteLength(word)}${CRLF}${word}${CRLF}`;
    return new Promise((resolve, reject) => {
      this.startSweeping();
      this.send(text, { at: this.waitingClock(), resolve, reject, words });
    });
  }

  /** At once: the connection opens with the first call, which waits for it. */
  whenConnected(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {
    this.closed = true;
    this.fail(new Error('Redis connection closed'));
  }

  private startSweeping(): void {
    if (this.sweeper !== null) return;
    this.lastSweep = performance.now();
    this.sweeper = setInterval(() => this.sweep(), this.sweepMs).unref();
  }

  /** The waiting clock now: as at the last sweep, plus the time since, as a sweep would count it. */
  private waitingClock(): number {
    return this.waited + Math.min(performance.now() - this.lastSweep, 2 * this.sweepMs);
  }

  private send(text: string, entry: Pending): void {
    if (this.socket === null) this.open();
    this.pending.push(entry);
    this.unsent.push(text);
    if (this.connected && !this.flushing) {
      this.flushing = true;
      process.nextTick(() => this.flush());
    }
  }

  private open(): void {
    const { tls } = this;
    const socket = tls === undefined
      ? connect({ host: this.target.host, port: this.target.port, noDelay: true })
      : connectTls({ ...tls, host: this.target.host, port: this.target.port }).setNoDelay(true);
    this.socket = socket;
    this.connected = false;
    this.rest = null;
    // AUTH and SELECT go first; a refusal of either drops the connection.
    for (const hello of this.target.hello) {
      this.pending.push({ at: this.waitingClock(), resolve: () => undefined, reject: (error) => this.fail(error), words: null });
      this.unsent.push(hello);
    }
    // Over TLS, writes may go once the handshake is done (and the server's certificate verified).
    socket.on(tls === undefined ? 'connect' : 'secureConnect', () => {
      if (this.socket !== socket) return;
      this.connected = true;
      this.flush();
    });
    socket.on('data', (chunk: Buffer) => {
      if (this.socket === socket) this.receive(chunk);
    });
    const lost = (error?: Error): void => {
      if (this.socket === socket) this.fail(error ?? new Error('Redis closed the connection'));
    };
    socket.on('error', lost);
    socket.on('close', () => lost());
  }

  private flush(): void {
    this.flushing = false;
    if (this.socket === null || !this.connected || this.unsent.length === 0) return;
    const text = this.unsent.length === 1 ? this.unsent[0]! : this.unsent.join('');
    this.unsent = [];
    this.socket.write(text);
  }

  private receive(chunk: Buffer): void {
    let buffer = this.rest === null ? chunk : Buffer.concat([this.rest, chunk]);
    let offset = 0;
    for (;;) {
      let parsed;
      try {
        parsed = parseReply(buffer, offset);
      } catch (error) {
        this.fail(error as Error);
        return;
      }
      if (parsed === undefined) break;
      offset = parsed.next;
      const entry = this.pending.shift();
      if (entry === undefined) {
        this.fail(new Error('Redis sent a reply nobody asked for'));
        return;
      }
      this.lastHeard = this.waitingClock();
      const reply = parsed.reply;
      if (this.givenUp > 0) {
        // Its caller has moved on; the script ran, or did not, either way without it.
        this.givenUp -= 1;
      } else if (reply instanceof Error) {
        if (reply.message.startsWith('NOSCRIPT') && entry.words !== null) {
          // Redis lost its script cache (SCRIPT FLUSH): EVAL sends the script and caches it again.
          this.send(command(['EVAL', this.script, ...entry.words]), { ...entry, words: null });
        } else {
          entry.reject(reply);
        }
      } else {
        entry.resolve(reply);
      }
      if (this.socket === null) return;
    }
    buffer = offset === buffer.length ? Buffer.alloc(0) : buffer.subarray(offset);
    this.rest = buffer.length === 0 ? null : buffer;
  }

  private sweep(): void {
    const now = performance.now();
    this.waited += Math.min(now - this.lastSweep, 2 * this.sweepMs);
    this.lastSweep = now;
    const oldest = this.pending[0];
    if (oldest === undefined) {
      if (this.sweeper !== null) clearInterval(this.sweeper);
      this.sweeper = null;
      return;
    }
    if (this.waited - Math.max(oldest.at, this.lastHeard) > this.lostAfterMs) {
      this.fail(new Error(`Redis answered nothing for ${this.lostAfterMs} ms`));
      return;
    }
    // Calls are in the order they were sent: the first one not yet due ends the search.
    while (this.givenUp < this.pending.length) {
      const entry = this.pending[this.givenUp]!;
      if (this.waited - entry.at <= this.timeoutMs) break;
      this.givenUp += 1;
      entry.reject(new SlowReplyError(`Redis did not answer within ${this.timeoutMs} ms`));
    }
  }

  /** Drops the connection and rejects every call waiting on it. */
  private fail(error: Error): void {
    const socket = this.socket;
    this.socket = null;
    this.connected = false;
    this.rest = null;
    this.unsent = [];
    socket?.destroy();
    for (const entry of this.pending.splice(0).slice(this.givenUp)) entry.reject(error);
    this.givenUp = 0;
    if (this.sweeper !== null) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}

/** A command in RESP: an array of bulk strings. */
function command(words: readonly string[]): string {
  let text = `*${words.length}${CRLF}`;
  for (const word of words) text += `$${Buffer.byteLength(word)}${CRLF}${word}${CRLF}`;
  return text;
}

function parseRedisUrl(url: string): { host: string; port: number; hello: string[] } {
  const parsed = new URL(url);
  const hello: string[] = [];
  const password = decodeURIComponent(parsed.password);
  const user = decodeURIComponent(parsed.username);
  if (password !== '') hello.push(command(user === '' ? ['AUTH', password] : ['AUTH', user, password]));
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && db !== '0') hello.push(command(['SELECT', db]));
  return { host: parsed.hostname === '' ? '127.0.0.1' : parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port === '' ? 6379 : Number(parsed.port), hello };
}

const INCOMPLETE = Symbol('incomplete');
/** Where the reply being parsed has got to; parsing is synchronous, so one cursor serves all. */
let cursor = 0;

/** One RESP2 reply at `offset`, or undefined when the buffer does not hold all of it yet. */
export function parseReply(buffer: Buffer, offset: number): { reply: Reply; next: number } | undefined {
  cursor = offset;
  const reply = readReply(buffer);
  return reply === INCOMPLETE ? undefined : { reply, next: cursor };
}

function readReply(buffer: Buffer): Reply | typeof INCOMPLETE {
  const start = cursor;
  const end = buffer.indexOf(CR, start);
  if (end === -1 || end + 1 >= buffer.length) return INCOMPLETE;
  const type = buffer[start];
  cursor = end + 2;
  switch (type) {
    case 0x3a: // :
      return integerAt(buffer, start + 1, end);
    case 0x24: { // $
      const length = integerAt(buffer, start + 1, end);
      if (length < 0) return null;
      const from = cursor;
      if (from + length + 2 > buffer.length) return INCOMPLETE;
      cursor = from + length + 2;
      return buffer.toString('utf8', from, from + length);
    }
    case 0x2a: { // *
      const count = integerAt(buffer, start + 1, end);
      if (count < 0) return null;
      const items: Reply[] = [];
      for (let i = 0; i < count; i += 1) {
        const item = readReply(buffer);
        if (item === INCOMPLETE) return INCOMPLETE;
        items.push(item);
      }
      return items;
    }
    case 0x2b: // +
      return buffer.toString('utf8', start + 1, end);
    case 0x2d: // -
      return new Error(buffer.toString('utf8', start + 1, end));
    default:
      throw new Error(`unexpected reply type from Redis: ${String(type)}`);
  }
}

/** The decimal integer between `from` and `to`, read without making a string of it. */
function integerAt(buffer: Buffer, from: number, to: number): number {
  const negative = buffer[from] === 0x2d;
  let value = 0;
  for (let i = negative ? from + 1 : from; i < to; i += 1) {
    const digit = buffer[i]! - 0x30;
    if (digit < 0 || digit > 9) throw new Error('unexpected integer in a reply from Redis');
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}
