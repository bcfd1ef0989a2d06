import { randomUUID } from 'node:crypto';
import type { AnnouncedKeyChanges, KeyChanges } from '../../application/instances/change-versions.js';

/** Where the version tokens live in Redis: never a key, a hash or a catalog, only random tokens and key ids. */
export const DEFAULT_VERSION_PREFIX = 'pcat:{v}:';

/** Candidates for a token where there is none: a random prefix and a count, unique, and cheaper than a UUID a request. */
export class FreshTokens {
  private readonly prefix = `${randomUUID()}.`;
  private count = 0;

  next(): string {
    this.count += 1;
    return this.prefix + String(this.count);
  }
}

export function keysVersionKey(prefix: string): string {
  return `${prefix}keys`;
}

export function catalogVersionKey(prefix: string, partnerId: string): string {
  return `${prefix}catalog:${partnerId}`;
}

/**
 * Lua: the token at a key, or, when there is none (never set, flushed, evicted, Redis restarted
 * empty), the fresh random candidate the caller sent, stored there. Any token seen before the loss
 * differs from it, so every reader re-reads.
 */
export const CURRENT_TOKEN_LUA = `
local function current(key, fresh)
  local token = redis.call('GET', key)
  if token then return token end
  redis.call('SET', key, fresh)
  return fresh
end
`;

/** The one token at KEYS[1], started from the candidate ARGV[1] where there is none. */
export const CURRENT_TOKEN_SCRIPT = `${CURRENT_TOKEN_LUA}\nreturn current(KEYS[1], ARGV[1])`;

/** A token as a script returned it: a non-empty string, or the reply was not what the script returns. */
export function tokenFrom(reply: unknown): string {
  if (typeof reply === 'string' && reply !== '') return reply;
  throw new Error(`unexpected reply from the version script: ${JSON.stringify(reply)}`);
}

/**
 * The key changes announced, a sorted set scored by Redis's clock (µs): `w:<key id>` withdrawn,
 * `a:<key id>` added, `?<token>` a change that did not say what it was, and `~origin` no later than
 * the first entry this Redis still holds. Kept KEY_CHANGES_RETENTION_MS.
 */
export function keyChangesKey(prefix: string): string {
  return `${prefix}keychanges`;
}

/** How long announced key changes are kept: an instance whose last read of its keys is older than this cannot decide any key without the database. */
export const KEY_CHANGES_RETENTION_MS = 7 * 24 * 60 * 60 * 1_000;

/**
 * Lua: Redis's clock in µs, and the set's origin made no later than now if it has none (a new or
 * emptied Redis). An entry scored at a mark's own microsecond is taken as after the mark: applied
 * again, a change only refuses or leaves undecided what the database would decide.
 */
const KEY_CHANGES_NOW_LUA = `
local function nowUs()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local function origin(key, now)
  if not redis.call('ZSCORE', key, '~origin') then redis.call('ZADD', key, now, '~origin') end
end
`;

/**
 * Announces a key change in one step: KEYS[1] the changes, KEYS[2] the key-set token; ARGV[1] the new
 * token, ARGV[2] the retention in ms, ARGV[3..] the entries. Entries older than the retention go, and
 * the origin moves up to where what is kept starts. The token is replaced last: whoever sees it finds
 * the entries.
 */
export const ANNOUNCE_KEY_CHANGES_SCRIPT = `${KEY_CHANGES_NOW_LUA}
local now = nowUs()
origin(KEYS[1], now)
for i = 3, #ARGV do redis.call('ZADD', KEYS[1], now, ARGV[i]) end
local oldest = now - tonumber(ARGV[2]) * 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. oldest)
origin(KEYS[1], oldest)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[1])
return 1`;

/** A mark on Redis's clock (µs), taken before an instance reads its keys: KEYS[1] the changes. */
export const KEY_CHANGES_MARK_SCRIPT = `${KEY_CHANGES_NOW_LUA}
local now = nowUs()
origin(KEYS[1], now)
return now`;

/**
 * The entries announced at or after the mark ARGV[1], or false when this Redis cannot tell them all
 * (its origin is later than the mark: it restarted empty or was flushed since).
 */
export const KEY_CHANGES_SINCE_SCRIPT = `
local from = redis.call('ZSCORE', KEYS[1], '~origin')
if not from or tonumber(from) > tonumber(ARGV[1]) then return false end
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')`;

/** The entries of a change, as ANNOUNCE_KEY_CHANGES_SCRIPT takes them. */
export function keyChangeEntries(changes: KeyChanges | undefined, unknownToken: string): string[] {
  if (changes === undefined) return [`?${unknownToken}`];
  return [...changes.withdrawn.map((id) => `w:${id}`), ...changes.added.map((id) => `a:${id}`)];
}

/** The changes since a mark as KEY_CHANGES_SINCE_SCRIPT returned them; null when they cannot decide a key. */
export function keyChangesFrom(reply: unknown): AnnouncedKeyChanges | null {
  if (!Array.isArray(reply)) return null;
  const withdrawn = new Set<string>();
  const added = new Set<string>();
  for (const entry of reply) {
    if (typeof entry !== 'string') return null;
    if (entry.startsWith('?')) return null;
    if (entry.startsWith('w:')) withdrawn.add(entry.slice(2));
    else if (entry.startsWith('a:')) added.add(entry.slice(2));
  }
  return { withdrawn, added };
}
