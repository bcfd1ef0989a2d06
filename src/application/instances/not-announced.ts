/**
 * A change committed to the database that the running instances could not be told of through the
 * shared store. The change stands: `committed` is what was committed, as the command answers it,
 * and each instance sees the change once what it holds expires (CACHE_TTL_MS at most). An operator
 * command says so and exits with a code of its own; running it again with Redis reachable tells
 * the instances at once.
 */
export class NotAnnouncedError<T = unknown> extends Error {
  override readonly name = 'NotAnnouncedError';

  constructor(what: string, readonly committed: T, readonly reason: string) {
    super(`${what} is committed to the database, but the running instances could not be told through Redis (${reason}): ` +
      'instances still connected to Redis may serve what they hold for up to CACHE_TTL_MS');
  }
}
