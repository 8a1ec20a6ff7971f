import type { Command } from 'commander';
import { loadConfig } from '../config.ts';
import { openSqlDatabase, type SqlDatabase } from '../stores/sql/sql-database.ts';
import type { CliIo } from './cli-io.ts';

/** What a command that opens the database was given: `--data-dir`, else the environment's. */
export function databaseSettings(io: CliIo, command: Command): { DATA_DIR: string; DATABASE_URL: string | undefined } {
  const dataDir = command.opts<{ dataDir?: string }>().dataDir;
  // The server's configuration, so the command opens the database the server opens.
  const config = loadConfig(dataDir ? { ...io.env, DATA_DIR: dataDir } : io.env);
  return { DATA_DIR: config.DATA_DIR, DATABASE_URL: config.DATABASE_URL };
}

/**
 * Opens the configured database (PostgreSQL at DATABASE_URL, else SQLite in DATA_DIR), brings
 * its schema up to date and hands it over; closed whatever happens. Safe beside running servers:
 * migrations serialise under a lock (an advisory lock on PostgreSQL, an immediate transaction on
 * SQLite).
 */
export async function withDatabase<T>(io: CliIo, command: Command, run: (database: SqlDatabase, migrated: string[]) => Promise<T>): Promise<T> {
  const database = openSqlDatabase(databaseSettings(io, command));
  try {
    return await run(database, await database.migrate());
  } finally {
    await database.close();
  }
}
