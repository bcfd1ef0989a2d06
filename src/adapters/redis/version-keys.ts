/** Where the version tokens live in Redis: never a key, a hash or a catalog, only random tokens. */
export const DEFAULT_VERSION_PREFIX = 'pcat:v:';

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
