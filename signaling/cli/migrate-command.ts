import { Command } from 'commander';
import type { CliIo } from './cli-io.ts';
import { databaseSettings, withDatabase } from './database.ts';

/**
 * `parley migrate`: brings the database to the latest schema (PostgreSQL at DATABASE_URL, else
 * SQLite in DATA_DIR). The server also does this at start; running it first lets a deploy fail
 * before any process is replaced. Safe while servers run: migrations serialise under a lock.
 */
export function migrateCommand(io: CliIo): Command {
  const migrate = new Command('migrate')
    .description('bring the database schema up to date (PostgreSQL at DATABASE_URL, else SQLite in DATA_DIR), under a lock')
    .option('--data-dir <dir>', 'where keys.sqlite3 lives when DATABASE_URL is unset (default: DATA_DIR, else ./data)');
  migrate.action(async () => {
    const settings = databaseSettings(io, migrate);
    const where = settings.DATABASE_URL ? 'PostgreSQL' : `SQLite in ${settings.DATA_DIR}`;
    const applied = await withDatabase(io, migrate, async (_database, migrated) => migrated);
    io.stdout(applied.length > 0 ? `migrate: ${where}: applied ${applied.join(', ')}\n` : `migrate: ${where}: schema is up to date\n`);
  });
  return migrate;
}
