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
