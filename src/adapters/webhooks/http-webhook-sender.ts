import { lookup as lookupName } from 'node:dns/promises';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { AttemptError, AttemptOutcome, WebhookAttempt, WebhookSender } from '../../application/webhooks/webhook-sender.js';
import { endSpan, tracing } from '../tracing/tracing.js';
import { endDeliverySpan, startDeliverySpan } from './delivery-span.js';

/** How much of an answer's body is read, for the delivery log; the rest is never read. */
export const MAX_EXCERPT_BYTES = 1024;

/** An address a name resolved to, as `dns.lookup` gives it. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

export interface HttpWebhookSenderOptions {
  /** The whole attempt, from resolving the name to the answer's head, in milliseconds. */
  readonly timeoutMs: number;
  /** Whether a resolved (or literal) address may be connected to. */
  readonly allowsAddress: (address: string) => boolean;
  /** Plain `http` URLs too (development and tests only). */
  readonly allowHttp: boolean;
  /** Resolves a host name to all its addresses (default: the system's resolver, as `getaddrinfo` answers). */
  readonly resolve?: (host: string) => Promise<readonly ResolvedAddress[]>;
}

const systemResolve = (host: string): Promise<readonly ResolvedAddress[]> => lookupName(host, { all: true, verbatim: true });

const USER_AGENT = 'partner-catalog-webhooks/1';

/**
 * Delivers over Node's own HTTP client, with the guards an outbound call to a partner's URL needs:
 * every address the name resolves to is checked, the connection goes to the checked address and
 * never resolves the name again (so DNS cannot swap it after the check), redirects are answers, not
 * instructions, the whole attempt has one deadline, and at most 1 KiB of the answer is read.
 * With tracing on, each attempt is a span whose context the request carries (`delivery-span.ts`).
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly resolve: (host: string) => Promise<readonly ResolvedAddress[]>;

  constructor(private readonly options: HttpWebhookSenderOptions) {
    this.resolve = options.resolve ?? systemResolve;
  }

  async send(attempt: WebhookAttempt): Promise<AttemptOutcome> {
    const target = URL.canParse(attempt.url) ? new URL(attempt.url) : null;
    const on = tracing();
    if (on === undefined) return this.attempt(attempt, target, {});
    const span = startDeliverySpan(on, attempt.subject, target);
    try {
      const outcome = await this.attempt(attempt, target, on.headersOf(span));
      endDeliverySpan(span, outcome);
      return outcome;
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
  }

  /** The attempt, its request carrying `traceHeaders` (none with tracing off). */
  private async attempt(attempt: WebhookAttempt, target: URL | null, traceHeaders: Record<string, string>): Promise<AttemptOutcome> {
    const started = performance.now();
    const outcome = (status: number | null, error: AttemptError | null, rest: Partial<Pick<AttemptOutcome, 'retryAfterSeconds' | 'excerpt'>> = {}): AttemptOutcome => ({
      status, error, durationMs: Math.round(performance.now() - started), retryAfterSeconds: rest.retryAfterSeconds ?? null, excerpt: rest.excerpt ?? '',
    });

    if (target === null || !(target.protocol === 'https:' || (this.options.allowHttp && target.protocol === 'http:'))) return outcome(null, 'invalid_url');
    if (target.username !== '' || target.password !== '') return outcome(null, 'invalid_url');

    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    let addresses: readonly ResolvedAddress[];
    if (isIP(host) !== 0) {
      addresses = [{ address: host, family: isIP(host) }];
    } else {
      const resolved = await beforeDeadline(this.resolve(host), deadline);
      if (resolved === 'timeout') return outcome(null, 'timeout');
      if (resolved === 'failed' || resolved.length === 0) return outcome(null, 'name_not_resolved');
      addresses = resolved;
    }
    // Every address, not only the first: the client could otherwise be steered to any of them.
    if (!addresses.every(({ address }) => this.options.allowsAddress(address))) return outcome(null, 'refused_address');

    const answer = await post(target, host, addresses[0]!, { ...attempt.headers, ...traceHeaders }, attempt.body, deadline);
    if (answer.kind === 'failed') return outcome(null, deadline.aborted ? 'timeout' : 'connection_failed');
    return outcome(answer.status, null, { retryAfterSeconds: retryAfterSeconds(answer.retryAfter), excerpt: answer.excerpt });
  }
}

/** Resolves with the promise's value, 'failed' if it rejects, or 'timeout' if the deadline comes first. */
function beforeDeadline<T>(promise: Promise<T>, deadline: AbortSignal): Promise<T | 'failed' | 'timeout'> {
  if (deadline.aborted) return Promise.resolve('timeout');
  return new Promise((resolve) => {
    const onAbort = (): void => resolve('timeout');
    deadline.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => resolve(value),
      () => resolve('failed'),
    ).finally(() => deadline.removeEventListener('abort', onAbort));
  });
}

type Answer =
  | { readonly kind: 'answered'; readonly status: number; readonly retryAfter: string | undefined; readonly excerpt: string }
  | { readonly kind: 'failed' };

/** POSTs to the one checked address, keeping the URL's name for Host and TLS; settles once, never throws. */
function post(target: URL, host: string, pinned: ResolvedAddress, headers: Readonly<Record<string, string>>, text: string, deadline: AbortSignal): Promise<Answer> {
  // The client asks this, not DNS, where the name is: always the address that was checked.
  const lookup: LookupFunction = (_name, options, callback) => {
    if (options.all === true) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  const body = Buffer.from(text, 'utf8');
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: Answer): void => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    let client: ClientRequest;
    try {
      client = request({
        method: 'POST',
        protocol: target.protocol,
        host,
        port: target.port === '' ? undefined : Number(target.port),
        path: `${target.pathname}${target.search}`,
        headers: { ...headers, 'Content-Length': String(body.length), 'User-Agent': USER_AGENT },
        lookup,
        // A connection of its own: a kept-alive socket would skip the address check of the next attempt.
        agent: false,
        signal: deadline,
        ...(isIP(host) === 0 && target.protocol === 'https:' ? { servername: host } : {}),
      });
    } catch {
      settle({ kind: 'failed' });
      return;
    }
    // Until an answer's head arrives a failure means no answer; after, the answer stands.
    let onFailure = (): void => settle({ kind: 'failed' });
    client.on('error', () => onFailure());
    client.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      const retryAfter = response.headers['retry-after'];
      const chunks: Buffer[] = [];
      let held = 0;
      const finish = (): void => {
        response.destroy();
        settle({ kind: 'answered', status, retryAfter, excerpt: Buffer.concat(chunks).subarray(0, MAX_EXCERPT_BYTES).toString('utf8') });
      };
      onFailure = finish;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        held += chunk.length;
        if (held >= MAX_EXCERPT_BYTES) finish();
      });
      response.on('end', finish);
      // The status came in time; a body that trickles past the deadline keeps what it sent.
      response.on('error', finish);
      response.on('aborted', finish);
    });
    client.end(body);
  });
}

/** RFC 9110 10.2.3: a number of seconds, or a date; anything else is no request to wait. */
export function retryAfterSeconds(value: string | undefined, now: number = Date.now()): number | null {
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date) || !/[A-Za-z]/.test(trimmed)) return null;
  return Math.max(0, Math.ceil((date - now) / 1000));
}
