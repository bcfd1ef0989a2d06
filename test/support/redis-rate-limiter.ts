import { RedisRateLimiter, type RedisRateLimiterOptions } from '../../src/adapters/redis/redis-rate-limiter.js';
import { DEFAULT_INSTANCES_KEY } from '../../src/adapters/redis/instance-presence.js';
import { RedisRequestRoundTrip, type RequestRoundTripOptions } from '../../src/adapters/redis/request-round-trip.js';

/**
 * A limiter on a round trip of its own, which counts only, as a test or a bench wants one alone: the
 * service's limiter shares its round trip with the watch for changes (deployment.ts). `instancesKey`
 * is `<keyPrefix>~instances` when a key prefix is given, so tests with prefixes of their own do not see each other.
 */
export function createRedisRateLimiter(options: RedisRateLimiterOptions & Omit<RequestRoundTripOptions, 'watch'>): RedisRateLimiter {
  const instancesKey = options.instancesKey ?? (options.keyPrefix === undefined ? DEFAULT_INSTANCES_KEY : `${options.keyPrefix}~instances`);
  return new RedisRateLimiter(new RedisRequestRoundTrip({ ...options, instancesKey }), options, true);
}
