import type { Cluster, Redis } from 'ioredis';
import { describeTarget, placeSetting, type RedisTarget } from './redis-target.js';

/**
 * Closes politely when connected; if Redis went away meanwhile, dropping the connection is all that
 * is left. Dropped after a QUIT too: with Sentinel, only that closes the connections ioredis keeps
 * to the sentinels to hear of a failover, which would otherwise report every sentinel that stops.
 */
export async function quitOrDrop(client: Redis | Cluster): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
    } catch {
      // Dropping it is all that is left.
    }
  }
  client.disconnect();
}

/** Redis did not answer: where, why, and what to do, naming the setting. */
export function redisUnreachable(target: RedisTarget, reason: string): Error {
  const place = placeSetting(target);
  return new Error(`${place}: ${describeTarget(target)} did not answer (${reason}): start it, or correct ${place}`);
}

/**
 * Redis answered, and refused the user the settings name. Unlike a Redis out of reach, this does not
 * pass by waiting: a start that meets it stops, as one the database refuses does.
 */
export class RedisRefusedError extends Error {
  override readonly name = 'RedisRefusedError';
}

/** The settings an operator changes about the login and the address, in words for a fix. */
interface Settings {
  /** Where the user name and password are set. */
  readonly login: string;
  /** How to give a password, and how to take it away. */
  readonly passwordHow: string;
  readonly passwordNot: string;
  /** The setting that names the servers. */
  readonly place: string;
}

function settingsOf(target: RedisTarget): Settings {
  if (target.kind === 'single') {
    return {
      login: 'REDIS_URL', place: 'REDIS_URL',
      passwordHow: 'write it in REDIS_URL, as redis://:password@host:6379',
      passwordNot: 'remove the password from REDIS_URL, or correct its host and port if they name another Redis',
    };
  }
  const place = placeSetting(target);
  return { login: 'REDIS_USERNAME/REDIS_PASSWORD', place, passwordHow: 'set REDIS_PASSWORD', passwordNot: `remove REDIS_PASSWORD, or correct ${place} if it names another Redis` };
}

/**
 * Redis's replies that refuse the user the settings name, by the reply's start (the code; Redis 5
 * and older say the first and third in words), and a server certificate that does not verify, each
 * with what was refused and what to change.
 */
const REFUSALS: readonly { readonly reply: RegExp; readonly refused: string; readonly fix: (settings: Settings) => string }[] = [
  { reply: /^(WRONGPASS|ERR invalid password)/, refused: 'the login', fix: (s) => `the user name or password in ${s.login} is wrong` },
  { reply: /^NOAUTH/, refused: 'the login', fix: (s) => `it asks for a password, and ${s.login} gives none: ${s.passwordHow}` },
  {
    reply: /^ERR (AUTH .* without any password configured|Client sent AUTH, but no password is set)/,
    refused: 'the login',
    fix: (s) => `it asks for no password, and ${s.login} gives one: ${s.passwordNot}`,
  },
  {
    // Node's TLS words, not Redis's: the server's certificate did not verify, which no wait mends either.
    reply: /certificate/i,
    refused: 'the TLS connection',
    fix: (s) => `its certificate is not signed by an authority this instance trusts, or not for this host: name the authority's PEM file in REDIS_TLS_CA_FILE, or correct the host in ${s.place}`,
  },
  {
    reply: /^NOPERM/,
    refused: 'a command this service needs',
    fix: (s) => `the user ${s.login} names lacks the permission: grant it in Redis's ACL (ACL SETUSER), or name a user that has it`,
  },
];

/** The refusal among Redis's replies that `reason` starts with; undefined for any other failure. */
function refusalIn(reason: string): (typeof REFUSALS)[number] | undefined {
  return REFUSALS.find((refusal) => refusal.reply.test(reason));
}

/** Whether `reason` is Redis refusing the user the settings name (a wrong password, no permission), or its certificate. */
export function isRedisRefusal(reason: string): boolean {
  return refusalIn(reason) !== undefined;
}

/**
 * A failure to reach Redis in an operator's words, naming the setting: a refusal as such (the
 * reply's words shown: Redis never repeats a password in them), anything else as Redis not answering.
 */
export function redisFailure(target: RedisTarget, reason: string): Error {
  const refusal = refusalIn(reason);
  if (refusal === undefined) return redisUnreachable(target, reason);
  const settings = settingsOf(target);
  return new RedisRefusedError(`${settings.place}: ${describeTarget(target)} refused ${refusal.refused} (${reason}): ${refusal.fix(settings)}`);
}
