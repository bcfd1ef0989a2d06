import { sql } from 'kysely';
import type { Logger } from 'pino';
import { TIMEOUTS } from '../timeouts.js';
import { databaseAdvice, databaseErrorIn, databaseTarget, isLastingDatabaseFailure, MIGRATE_COMMAND } from './database-advice.js';
import { createMysqlDatabase, type MysqlTls } from './mysql-database.js';
import { migrationProvider } from './migrations.js';

/** Kysely's own record of the migrations applied. */
const MIGRATION_TABLE = 'kysely_migration';

/**
 * Looks at the database once before an instance serves from it, over TLS when `tls` is given. One
 * that does not exist, refuses the credentials, takes TLS connections only while TLS is off, shows
 * a certificate that does not verify, or lacks migrations this version needs stops the start,
 * saying what to do: it would not come right by itself, and an instance on it would answer every
 * partner 503 or 500 while looking alive. One out of reach is only logged: it may come back, and
 * `/readyz` tells meanwhile.
 */
export async function checkDatabaseAtStart(url: string, tls: MysqlTls | undefined, logger: Logger): Promise<void> {
  await checkAtStart(url, tls, logger, PRIMARY);
}

/**
 * Looks at each replica (DATABASE_REPLICA_URLS) as at the primary, naming that setting. One out of
 * reach, or behind on migrations (it may still be applying them), is only logged: its reads go to
 * the primary meanwhile.
 */
export async function checkReplicasAtStart(urls: readonly string[], tls: MysqlTls | undefined, logger: Logger): Promise<void> {
  for (const [index, url] of urls.entries()) {
    await checkAtStart(url, tls, logger, { setting: 'DATABASE_REPLICA_URLS', which: `replica ${index + 1} of ${urls.length}`, lacking: 'warn' });
  }
}

/** Which setting named the server, which of its servers it is, and what lacking migrations does. */
interface Role {
  readonly setting: string;
  /** Empty for the one server DATABASE_URL names. */
  readonly which: string;
  readonly lacking: 'stop' | 'warn';
}

const PRIMARY: Role = { setting: 'DATABASE_URL', which: '', lacking: 'stop' };

async function checkAtStart(url: string, tls: MysqlTls | undefined, logger: Logger, role: Role): Promise<void> {
  const db = createMysqlDatabase(url, { ...TIMEOUTS.servingDatabase, connectionLimit: 1, tls });
  try {
    const { rows } = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db);
    const applied = new Set(rows.map((row) => row.name));
    const known = Object.keys(await migrationProvider.getMigrations());
    const missing = known.filter((name) => !applied.has(name));
    const target = databaseTarget(url);
    const named = target === null ? 'the database' : `database \`${target.database}\` on ${target.host}:${target.port}`;
    if (missing.length > 0 && role.lacking === 'warn') {
      logger.warn({ migrations: missing }, `database: ${role.which}, ${named}, lacks migrations the primary should have: it may still be applying them; its reads go to the primary if it is behind`);
    } else if (missing.length > 0) {
      throw new Error(`${named} lacks ${missing.length} migration${missing.length === 1 ? '' : 's'} this version needs (${missing.join(', ')}). ` +
        `Bring it up to date with the same DATABASE_URL before starting:\n  ${MIGRATE_COMMAND}`);
    }
    const unknown = [...applied].filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      logger.warn({ migrations: unknown }, `database: ${named} has migrations this version does not know: a newer version migrated it; run that version`);
    }
  } catch (error) {
    const failure = databaseErrorIn(error);
    if (failure === null) throw error;
    const advice = naming(role, databaseAdvice(failure, url, tls !== undefined, role.setting) ?? failure.message);
    // No table of migrations at all (ER_NO_SUCH_TABLE) is a database that was never migrated.
    if (isLastingDatabaseFailure(failure)) throw new Error(advice);
    if (failure.storageUnavailable) {
      logger.warn({ reason: advice }, role === PRIMARY ? 'database: not reachable at start; /readyz answers 503 until it is' : 'database replica: not reachable at start; its reads go to the primary until it is');
    }
    // A user that may read only the service's own tables: the schema goes unchecked, and the start goes on.
    else logger.warn({ reason: advice }, 'database: its migrations could not be read at start, so the schema is not checked');
  } finally {
    await db.destroy();
  }
}

/** The message, the server named after its setting: `DATABASE_REPLICA_URLS: replica 2 of 3: ...`. */
function naming(role: Role, message: string): string {
  if (role.which === '') return message;
  const prefix = `${role.setting}: `;
  return message.startsWith(prefix) ? `${prefix}${role.which}: ${message.slice(prefix.length)}` : `${prefix}${role.which}: ${message}`;
}
