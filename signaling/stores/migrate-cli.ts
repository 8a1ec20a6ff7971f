import { openSqlDatabase } from './sql/sql-database.ts';

/**
 * `npm run migrate`: brings the database to the latest schema (PostgreSQL at DATABASE_URL, else
 * SQLite in DATA_DIR). The server also does this at start; running it first lets a deploy fail
 * before any process is replaced. Safe while servers run: migrations serialise under a lock.
 */
async function main(): Promise<number> {
  const settings = { DATA_DIR: process.env.DATA_DIR || './data', DATABASE_URL: process.env.DATABASE_URL || undefined };
  const database = openSqlDatabase(settings);
  try {
    const applied = await database.migrate();
    const where = database.engine === 'postgres' ? 'PostgreSQL' : `SQLite in ${settings.DATA_DIR}`;
    process.stdout.write(applied.length > 0 ? `migrate: ${where}: applied ${applied.join(', ')}\n` : `migrate: ${where}: schema is up to date\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`migrate: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await database.close();
  }
}

process.exitCode = await main();
