import { migrationProvider } from '../../src/adapters/mysql/migrations.js';

/** The names of the migrations from `first` on, in order: what runs again once they are forgotten. */
export async function migrationsFrom(first: string): Promise<string[]> {
  return Object.keys(await migrationProvider.getMigrations()).filter((name) => name >= first).sort();
}
