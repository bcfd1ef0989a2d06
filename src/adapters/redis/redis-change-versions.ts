import { reasonOf } from '../../domain/failure-reason.js';
import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { tokenAt, type ChangeVersions, type KeyChanges } from '../../application/instances/change-versions.js';
import { TIMEOUTS } from '../timeouts.js';
import { quitOrDrop, redisFailure } from './redis-client.js';
import { ioredisClient, type RedisTarget } from './redis-target.js';
import {
  ANNOUNCE_KEY_CHANGES_SCRIPT, catalogVersionKey, CURRENT_TOKEN_SCRIPT, DEFAULT_VERSION_PREFIX, KEY_CHANGES_RETENTION_MS, keyChangeEntries, keyChangesKey, keysVersionKey, tokenFrom,
} from './version-keys.js';

/** An operator command may wait a little for Redis; a request never uses this client. */
const TIMEOUT_MS = TIMEOUTS.operatorRedisMs;
const RECONNECT_ATTEMPTS = 3;

type TokenClient = (Redis | Cluster) & {
  pcatCurrentToken(key: string, fresh: string): Promise<unknown>;
  pcatAnnounceKeyChanges(changesKey: string, tokenKey: string, token: string, retentionMs: number, ...entries: string[]): Promise<unknown>;
};

export interface RedisChangeVersionsOptions {
  /** Where Redis is; never logged, since it may carry a password. */
  readonly target: RedisTarget;
  readonly versionPrefix?: string;
  /**
   * The database's position now, read after a change commits and carried by its token, so instances
   * reading replicas wait for the change to reach them; none, or null from it: tokens carry none.
   */
  readonly position?: () => Promise<string | null>;
}

/**
 * The version tokens in Redis, for the commands that write (imports, keys issued or revoked):
 * each write replaces the token after its transaction commits, and the serving instances read
 * the tokens in the round trip of every request (request-round-trip.ts).
 */
export class RedisChangeVersions implements ChangeVersions {
  private readonly client: TokenClient;
  private readonly prefix: string;
  private readonly target: RedisTarget;
  private readonly position: (() => Promise<string | null>) | undefined;
  /** Why the connection last failed: the command's own error says only that it gave up. */
  private lastError: string | null = null;

  constructor(options: RedisChangeVersionsOptions) {
    this.target = options.target;
    this.position = options.position;
    this.prefix = options.versionPrefix ?? DEFAULT_VERSION_PREFIX;
    const client = ioredisClient(options.target, {
      connectTimeout: TIMEOUT_MS,
      commandTimeout: TIMEOUT_MS,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => (attempt > RECONNECT_ATTEMPTS ? null : attempt * 200),
    });
    client.defineCommand('pcatCurrentToken', { numberOfKeys: 1, lua: CURRENT_TOKEN_SCRIPT });
    client.defineCommand('pcatAnnounceKeyChanges', { numberOfKeys: 2, lua: ANNOUNCE_KEY_CHANGES_SCRIPT });
    // Failures reach the caller through the command that failed.
    client.on('error', (error: Error) => {
      this.lastError = error.message;
    });
    this.client = client as TokenClient;
  }

  async keysChanged(changes?: KeyChanges): Promise<void> {
    const token = tokenAt(randomUUID(), await this.positionNow());
    await this.told(this.client.pcatAnnounceKeyChanges(keyChangesKey(this.prefix), keysVersionKey(this.prefix), token, KEY_CHANGES_RETENTION_MS, ...keyChangeEntries(changes, token)));
  }

  async catalogsChanged(partnerIds: readonly string[]): Promise<void> {
    if (partnerIds.length === 0) return;
    const position = await this.positionNow();
    await this.told(this.client.mset(...partnerIds.flatMap((partnerId) => [catalogVersionKey(this.prefix, partnerId), tokenAt(randomUUID(), position)])));
  }

  /**
   * The database's position now, for the tokens of a change just committed. One that cannot be read
   * leaves the tokens without one: instances then read the primary's position themselves, and the
   * change is still told.
   */
  private async positionNow(): Promise<string | null> {
    return this.position === undefined ? null : this.position().catch(() => null);
  }

  /**
   * A write, failing in words that name Redis's address and why: that it refused the user the
   * settings name (the login, or the write), or that it could not be reached.
   */
  private async told(write: Promise<unknown>): Promise<void> {
    try {
      await write;
    } catch (error) {
      const reason = this.client.status === 'ready' ? reasonOf(error) : this.lastError ?? 'no connection';
      throw redisFailure(this.target, reason);
    }
  }

  async keysVersion(): Promise<string> {
    return tokenFrom(await this.client.pcatCurrentToken(keysVersionKey(this.prefix), randomUUID()));
  }

  async catalogVersion(partnerId: string): Promise<string> {
    return tokenFrom(await this.client.pcatCurrentToken(catalogVersionKey(this.prefix, partnerId), randomUUID()));
  }

  close(): Promise<void> {
    return quitOrDrop(this.client);
  }
}
