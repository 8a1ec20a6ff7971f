import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlDatabase, type SqlDatabase, type SqlSettings } from '../stores/sql/sql-database.ts';
import { SqlKeyStore } from '../stores/sql/sql-key-store.ts';
import { postgresAvailable, startPostgres, type TestPostgres } from './postgres-server.ts';

/**
 * Both relational engines for contract tests: `describe.each(sqlEngines())` runs one suite on
 * SQLite and on a real PostgreSQL. PostgreSQL starts once per test file, on first use; every
 * `fresh()` is a new empty database (or a new SQLite directory), migrated.
 *
 *   describe.each(sqlEngines())('KeyStore on $name', (engine) => {
 *     afterAll(() => engine.cleanup());
 *     it('...', async () => { const db = await engine.fresh(); ... });
 *   });
 */
export interface SqlEngine {
  name: 'sqlite' | 'postgres';
  /** The settings of a new empty database (not opened, not migrated). */
  settings(): Promise<SqlSettings>;
  /** A new database, opened and migrated; closed by cleanup(). */
  fresh(): Promise<SqlDatabase>;
  cleanup(): Promise<void>;
}

export function sqlEngines(): SqlEngine[] {
  const engines = [engine('sqlite', async (dir) => ({ DATA_DIR: dir }))];
  if (postgresAvailable()) {
    let server: Promise<TestPostgres> | undefined;
    engines.push(
      engine('postgres', async (dir) => ({ DATA_DIR: dir, DATABASE_URL: await (await (server ??= startPostgres())).createDatabase() }), async () => {
        if (server) await (await server).close();
      }),
    );
  } else {
    process.stderr.write('postgres: not installed (apt-get install -y --no-install-recommends postgresql); PostgreSQL contract tests are SKIPPED\n');
  }
  return engines;
}

function engine(name: SqlEngine['name'], settingsIn: (dir: string) => Promise<SqlSettings>, stop: () => Promise<void> = async () => undefined): SqlEngine {
  const opened: SqlDatabase[] = [];
  const dirs: string[] = [];
  const settings = (): Promise<SqlSettings> => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-sql-'));
    dirs.push(dir);
    return settingsIn(dir);
  };
  return {
    name,
    settings,
    async fresh() {
      const database = openSqlDatabase(await settings());
      opened.push(database);
      await database.migrate();
      return database;
    },
    async cleanup() {
      await Promise.all(opened.splice(0).map((d) => d.close()));
      await stop();
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A persistent key in the database of `settings`, made as an operator would before the server starts. */
export async function createPersistentKey(settings: SqlSettings, account: string): Promise<{ key: string; id: string }> {
  const database = openSqlDatabase(settings);
  try {
    await database.migrate();
    const { key, id } = await new SqlKeyStore(database).create(account);
    return { key, id };
  } finally {
    await database.close();
  }
}
