import { CURRENT_TOKEN_LUA } from './version-keys.js';

/** The replication id of the Redis running the script, or '-' where INFO does not give one. */
const REPLICATION_ID_LUA = `string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)') or '-'`;

/**
 * The counts of the requests gathered in one loop turn, in one atomic step, so concurrent instances
 * never read-then-write. ARGV[1] is the counters' window in ms, ARGV[4] the index in KEYS of the
 * first counter and ARGV[5] how many there are; from ARGV[7] on, what each counter is to be
 * counted up by, in order: 1 for a request, more for a request that also brings the requests
 * its instance admitted on its share while Redis was away. Each counter's window starts with its first count;
 * the key's expiry ends it. A counter found without an expiry (written by hand, say) gets one, so
 * it can never block a key for good. The reply holds each counter's count and ms left, in order.
 *
 * When ARGV[2] names the calling instance (at most once a second), the sorted set KEYS[1] records
 * it as seen now, by Redis's clock, forgets instances not seen for ARGV[3] ms, and the reply starts
 * with how many are left; otherwise with -1.
 */
const INSTANCES_LUA = `
local instances = -1
if ARGV[2] ~= '' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  redis.call('ZADD', KEYS[1], now, ARGV[2])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  instances = redis.call('ZCARD', KEYS[1])
end
`;
const COUNT_LUA = `${INSTANCES_LUA}local reply = {instances}
local first = tonumber(ARGV[4])
local last = first + tonumber(ARGV[5]) - 1
local step = 7 - first
`;
const COUNTERS_LUA = `
for i = first, last do
  local by = tonumber(ARGV[i + step])
  local count = redis.call('INCRBY', KEYS[i], by)
  if count == by then redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
  local msLeft = redis.call('PTTL', KEYS[i])
  if msLeft < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
    msLeft = tonumber(ARGV[1])
  end
  reply[#reply + 1] = count
  reply[#reply + 1] = msLeft
end
`;
/** KEYS[1] the instances, then the counters (ARGV[6] unread): the reply is `{instances, count, msLeft, count, msLeft, ...}`. */
export const COUNT_SCRIPT = `${COUNT_LUA}${COUNTERS_LUA}return reply`;
/**
 * The same counts, and in the same step the key-set token (KEYS[2]) and the catalog token of each
 * partner among the requests (the keys after the counters), each started where there is none from
 * the fresh candidate ARGV[6], suffixed so no two ever start equal; last, the server's replication
 * id, which tells one Redis's data from another's: a replica promoted after a failover takes a new
 * one, and so does a Redis restarted without its data. The reply is `{instances, key-set token,
 * count, msLeft, ..., catalog token, ..., replication id}`.
 */
export const COUNT_AND_VERSIONS_SCRIPT = `${CURRENT_TOKEN_LUA}${COUNT_LUA}reply[2] = current(KEYS[2], ARGV[6] .. 'k')
${COUNTERS_LUA}for i = last + 1, #KEYS do reply[#reply + 1] = current(KEYS[i], ARGV[6] .. 'c' .. i) end
reply[#reply + 1] = ${REPLICATION_ID_LUA}
return reply`;

/*
 * On a Cluster, a script's keys must all hash to one slot, and the script above touches many: the
 * same work goes in the three scripts below, each to one slot (cluster-calls.ts). The version
 * tokens share the slot of their prefix's hash tag; the instances have a key of their own; the
 * counters of one slot go together.
 */

/** KEYS[1] the instances, with ARGV[2] and ARGV[3] as above (ARGV[1] unread): how many instances are left. */
export const INSTANCES_SCRIPT = `${INSTANCES_LUA}return instances`;

/** The counters KEYS[1..], each counted up by ARGV[2..] in a window of ARGV[1] ms: `{count, msLeft, ...}`. */
export const COUNTERS_SCRIPT = `local reply = {}
local first = 1
local last = #KEYS
local step = 1
${COUNTERS_LUA}return reply`;

/**
 * The key-set token (KEYS[1]) and the catalog tokens (KEYS[2..]), each started from the candidate
 * ARGV[1] where there is none, and the replication id: `{key-set token, catalog token, ..., id}`.
 */
export const VERSIONS_SCRIPT = `${CURRENT_TOKEN_LUA}local reply = {current(KEYS[1], ARGV[1] .. 'k')}
for i = 2, #KEYS do reply[#reply + 1] = current(KEYS[i], ARGV[1] .. 'c' .. i) end
reply[#reply + 1] = ${REPLICATION_ID_LUA}
return reply`;
