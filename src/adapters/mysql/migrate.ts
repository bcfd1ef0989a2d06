import { Migrator, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { migrationProvider } from './migrations.js';
import { reasonOf } from '../../domain/failure-reason.js';

/** Brings the schema up to date and returns the names of the migrations it applied (none if current). */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  // Kysely reports a failed migration in the result instead of throwing.
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'run';
    throw new Error(`migration ${failed} failed: ${reasonOf(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
