import { SqlAccountBook } from '../stores/sql/sql-account-book.ts';
import { openCliDatabase } from '../stores/stores.ts';
import type { SqlDatabase, SqlSettings } from '../stores/sql/sql-database.ts';
import { SqlUsageLedger } from '../stores/sql/sql-usage-ledger.ts';
import type { AccountBook, UsageLedger } from '../usage/usage-ports.ts';

export interface UsageStore {
  database: SqlDatabase;
  ledger: UsageLedger;
  book: AccountBook;
  close(): Promise<void>;
}

/**
 * The usage ledger and account book on the database `settings` name (SQLite in DATA_DIR, or
 * PostgreSQL), migrated, as the server's stores build them; `portable` makes SQLite take the
 * query-builder write path PostgreSQL uses.
 */
export async function openUsageStore(settings: SqlSettings, options: { portable?: boolean } = {}): Promise<UsageStore> {
  const database = await openCliDatabase(settings);
  return { database, ledger: new SqlUsageLedger(database, options), book: new SqlAccountBook(database), close: () => database.close() };
}
