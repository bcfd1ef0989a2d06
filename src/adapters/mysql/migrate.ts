import { Migrator, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { DatabaseError } from './database-error.js';
import { migrationProvider } from './migrations.js';
import { reasonOf } from '../../domain/failure-reason.js';

/** Brings the schema up to date and returns the names of the migrations it applied (none if current). */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  // Kysely reports a failed migration in the result instead of throwing.
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'run';
    // The adapter's own error only as the cause: it holds a code, never a statement or a value.
    throw new Error(`migration ${failed} failed: ${reasonOf(error)}`, error instanceof DatabaseError ? { cause: error } : {});
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
