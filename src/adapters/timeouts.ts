/**
 * Every timeout a deployment might want to tune, in one place, in milliseconds unless the name
 * says otherwise. No use case waits on a clock of its own, so they live with the adapters: a file
 * directly in src/adapters, which every adapter folder and composition root may import.
 * Windows that are policy rather than waiting (the rate-limit window, the connection guard's
 * penalty window, log summary intervals) stay next to the rule they belong to.
 */
export const TIMEOUTS = {
  /** After SIGTERM or SIGINT, requests in flight may finish for this long before their connections are closed. */
  shutdownGraceMs: 10_000,
  /**
   * While shutting down, a keep-alive connection is closed once it has waited this long for a request:
   * a busy client sends its next one sooner and is told Connection: close with its answer instead.
   */
  closingIdleConnectionMs: 250,
  /** At the stop, the spans still queued are exported for at most this long, then dropped and counted. */
  traceFlushMs: 2_000,
  /** A close that still hangs this long after the grace period ends the process with exit code 1. */
  shutdownHangMarginMs: 5_000,
  /** How long start-up waits for Redis before counting requests in-process until it comes. */
  redisStartWaitMs: 2_000,
  /**
   * Serving requests: a Redis connect or command (the count, a token read) is given up after this long;
   * that request is counted on this instance's share, and reads the database, but Redis is not taken as lost.
   */
  redisCommandMs: 200,
  /**
   * Redis is taken as lost when its connection is refused or closes, or when it has answered nothing
   * for this long while counts wait, not counting time this process could not run (its event loop held
   * up, or the machine not running it): a busy moment is not a loss.
   */
  redisLostAfterMs: 1_000,
  /** After Redis is lost, requests are counted on this instance's share this long before one background PING asks again. */
  redisCoolDownMs: 1_000,
  /** The longest wait between two attempts to reconnect to Redis. */
  redisMaxReconnectDelayMs: 1_000,
  /** Operator commands: announcing a change through Redis may wait this long per attempt. */
  operatorRedisMs: 2_000,

  /** How long a request's headers may take to arrive before a 408. */
  httpHeadersMs: 10_000,
  /** How long the whole request may take to arrive before a 408. */
  httpRequestMs: 15_000,
  /** How long an idle keep-alive connection is kept open. */
  httpKeepAliveMs: 5_000,
  /** A socket with no traffic either way for this long (a client that stopped reading) is closed. */
  httpStalledSocketMs: 30_000,
  /**
   * A request held back for its address's failed authentications is answered only after this long.
   * A flooding client that waits for each answer is slowed to one request per connection per second,
   * so it costs the server almost nothing while the clients on other addresses are served.
   */
  heldBackAnswerDelayMs: 1_000,
  /**
   * A refused connection is answered only after this long, unread meanwhile: a client that opens a new
   * connection the moment one is refused then costs an accept and a timer per second per connection,
   * instead of keeping the accept queue, which every client shares, full.
   */
  refusedConnectionDelayMs: 1_000,
  /** How long a refused connection is kept, for its answer to be read, before it is dropped. */
  refusedConnectionLingerMs: 250,
  /** How long a connection answered before its request body was read is kept, unread, for the answer to be read, before it is dropped. */
  unreadBodyLingerMs: 1_000,

  /**
   * Serving requests: a request reads the database twice at most (its key, then its product), so
   * with the database unreachable in any way it fails within two deadlines, 2 s, leaving room for
   * a busy machine inside the 5 s a client is promised; a point read takes about a millisecond.
   * A connect on a black-holed path frees its slot within 1 s, which bounds recovery too.
   */
  servingDatabase: { connectTimeoutMs: 1_000, queryTimeoutMs: 1_000 },
  /**
   * A request the instance cannot decide while its storage is unreachable is answered 503 with this
   * Retry-After (seconds); the instance tries the database again at most once a second meanwhile.
   */
  storageRetryAfterSeconds: 2,
  /** While the database is unreachable, the key set is read again at most this often (one read at a time, in the background). */
  keySetRetryMs: 1_000,
  /**
   * Start-up waits this long for the whole key set before it listens: a small set is held before the
   * first request; a large one goes on loading while the instance listens, not ready until it is held.
   */
  keySetStartWaitMs: 2_000,
  /** `/readyz`: the database is ready when `SELECT 1` answers within this long. */
  readinessProbeMs: 1_500,
  /** Operator commands work on large catalogs: connect fast, but let a statement run long. */
  operatorDatabase: { connectTimeoutMs: 5_000, queryTimeoutMs: 600_000 },
  /** How long an import waits, in seconds, for another import into the same database to finish. */
  importLockWaitS: 600,
} as const;
