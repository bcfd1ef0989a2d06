import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type { Redis } from 'ioredis';

/** Closes politely when connected; if Redis went away meanwhile, dropping the connection is all that is left. */
export async function quitOrDrop(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // Fall through to dropping it.
    }
  }
  client.disconnect();
}

/** Where a `redis://` URL points, for messages: host and port, never a password. */
export function redisServer(url: string): string {
  if (!URL.canParse(url)) return 'the server REDIS_URL names';
  const { hostname, port } = new URL(url);
  return `${hostname}:${port === '' ? '6379' : port}`;
}

/** Redis did not answer: where, why, and what to do, naming the setting. */
export function redisUnreachable(url: string, reason: string): Error {
  return new Error(`REDIS_URL: Redis at ${redisServer(url)} did not answer (${reason}): start it, or correct REDIS_URL`);
}

/**
 * Redis answered, and refused the user REDIS_URL names. Unlike a Redis out of reach, this does not
 * pass by waiting: a start that meets it stops, as one the database refuses does.
 */
export class RedisRefusedError extends Error {
  override readonly name = 'RedisRefusedError';
}

/**
 * Redis's replies that refuse the user REDIS_URL names, by the reply's start (the code; Redis 5 and
 * older say the first and third in words), and a server certificate that does not verify, each
 * with what was refused and what to change.
 */
const REFUSALS: readonly { readonly reply: RegExp; readonly refused: string; readonly fix: string }[] = [
  { reply: /^(WRONGPASS|ERR invalid password)/, refused: 'the login', fix: 'the user name or password in REDIS_URL is wrong' },
  { reply: /^NOAUTH/, refused: 'the login', fix: 'it asks for a password, and REDIS_URL gives none: write it in REDIS_URL, as redis://:password@host:6379' },
  {
    reply: /^ERR (AUTH .* without any password configured|Client sent AUTH, but no password is set)/,
    refused: 'the login',
    fix: 'it asks for no password, and REDIS_URL gives one: remove the password from REDIS_URL, or correct its host and port if they name another Redis',
  },
  {
    // Node's TLS words, not Redis's: the server's certificate did not verify, which no wait mends either.
    reply: /certificate/i,
    refused: 'the TLS connection',
    fix: 'its certificate is not signed by an authority this instance trusts, or not for this host: name the authority\'s PEM file in REDIS_TLS_CA_FILE, or correct the host in REDIS_URL',
  },
  {
    reply: /^NOPERM/,
    refused: 'a command this service needs',
    fix: 'the user REDIS_URL names lacks the permission: grant it in Redis\'s ACL (ACL SETUSER), or name a user in REDIS_URL that has it',
  },
];

/** The refusal among Redis's replies that `reason` starts with; undefined for any other failure. */
function refusalIn(reason: string): (typeof REFUSALS)[number] | undefined {
  return REFUSALS.find((refusal) => refusal.reply.test(reason));
}

/** Whether `reason` is Redis refusing the user REDIS_URL names (a wrong password, no permission). */
export function isRedisRefusal(reason: string): boolean {
  return refusalIn(reason) !== undefined;
}

/**
 * A failure to reach Redis in an operator's words, naming REDIS_URL: a refusal as such (the reply's
 * words shown: Redis never repeats a password in them), anything else as Redis not answering.
 */
export function redisFailure(url: string, reason: string): Error {
  const refusal = refusalIn(reason);
  if (refusal === undefined) return redisUnreachable(url, reason);
  return new RedisRefusedError(`REDIS_URL: Redis at ${redisServer(url)} refused ${refusal.refused} (${reason}): ${refusal.fix}`);
}

/**
 * The TLS options for a Redis URL: none for `redis://`; for `rediss://`, the server's certificate
 * verified against `ca` (the system's authorities without one) and its name against the URL's host.
 */
export function redisTls(url: string, ca: Buffer | undefined): ConnectionOptions | undefined {
  const parsed = new URL(url);
  if (parsed.protocol !== 'rediss:') return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return { ...(ca === undefined ? {} : { ca }), ...(isIP(host) === 0 ? { servername: host } : {}), rejectUnauthorized: true };
}
