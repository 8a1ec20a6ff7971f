import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrateUsage } from './sql/usage-migrations.ts';
import { SqlAccountBook } from './sql/sql-account-book.ts';
import { SqlUsageLedger } from './sql/sql-usage-ledger.ts';
import { sqliteLedgerWrites } from './sql/sqlite-ledger-writes.ts';
import type { UsageTables } from './sql/usage-tables.ts';
import type { AccountBook, UsageLedger } from './usage-ports.ts';

export interface UsageStore {
  ledger: UsageLedger;
  book: AccountBook;
  close(): Promise<void>;
}

/**
 * The embedded usage store: SQLite in DATA_DIR/keys.sqlite3, the key database's file (WAL, so the
 * server reads while the CLI writes), its schema migrated on open. `portableWrites` takes the
 * query-builder path that PostgreSQL uses for the ledger's writes too (its contract tests).
 */
export async function openUsageStore(dataDir: string, options: { portableWrites?: boolean } = {}): Promise<UsageStore> {
  mkdirSync(dataDir, { recursive: true });
  const file = new Database(join(dataDir, 'keys.sqlite3'));
  file.pragma('journal_mode = WAL');
  file.pragma('busy_timeout = 5000');
  // WAL with NORMAL: a commit survives the process dying (what the ledger promises); only an OS
  // crash or power cut may lose the last commits. FULL syncs the disk at every turn's write.
  file.pragma('synchronous = NORMAL');
  const db = new Kysely<UsageTables>({ dialect: new SqliteDialect({ database: file }) });
  try {
    await migrateUsage(db as Kysely<unknown>);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { ledger: new SqlUsageLedger(db, options.portableWrites ? undefined : sqliteLedgerWrites(file)), book: new SqlAccountBook(db), close: () => db.destroy() };
}
