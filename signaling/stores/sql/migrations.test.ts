import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../keys/key-store.ts';
import { sqlEngines } from '../../testing/sql-engines.ts';
import { migrationsFor } from './migrations.ts';
import { openSqlDatabase } from './sql-database.ts';
import { SqlKeyStore } from './sql-key-store.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const run = promisify(execFile);

/** `parley migrate` (`npm run migrate`) as an operator runs it: its own process (one node, tsx as a loader). */
function migrateCli(env: { DATA_DIR: string; DATABASE_URL?: string | undefined }) {
  return run(process.execPath, ['--import', 'tsx', 'signaling/cli/parley.ts', 'migrate'], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 });
}

describe.each(sqlEngines())('migrations on $name', (engine) => {
  afterAll(() => engine.cleanup());

  it('parley migrate from two processes at once: both succeed and every migration runs once', async () => {
    const settings = await engine.settings();
    const runs = await Promise.all([migrateCli(settings), migrateCli(settings)]);
    const said = runs.map((r) => r.stdout.trim());
    // One of them applied everything (the other waited for the lock, then found nothing to do).
    const names = Object.keys(migrationsFor(engine.name));
    expect(said.filter((s) => s.includes(`applied ${names.join(', ')}`))).toHaveLength(1);
    expect(said.filter((s) => s.endsWith('schema is up to date'))).toHaveLength(1);

    const database = openSqlDatabase(settings);
    try {
      const ran = await database.db.selectFrom('kysely_migration' as never).select('name' as never).execute();
      expect(ran.map((r) => (r as { name: string }).name)).toEqual(names);
      expect(await database.migrate()).toEqual([]);
      const k = await new SqlKeyStore(database).create('acme');
      expect((await new SqlKeyStore(database).lookup(k.key)).status).toBe('active');
    } finally {
      await database.close();
    }
  }, 60_000);

  it('five servers starting together in one process (separate pools) migrate once', async () => {
    const settings = await engine.settings();
    const databases = Array.from({ length: engine.name === 'postgres' ? 5 : 1 }, () => openSqlDatabase(settings));
    try {
      const applied = await Promise.all(databases.map((d) => d.migrate()));
      expect(applied.flat().sort()).toEqual(Object.keys(migrationsFor(engine.name)).sort());
    } finally {
      await Promise.all(databases.map((d) => d.close()));
    }
  });
});

describe('migrations on sqlite: a database from before migrations', () => {
  const [sqlite] = sqlEngines();
  afterAll(() => sqlite!.cleanup());

  it('keeps its keys, and their accounts appear in accounts', async () => {
    const { DATA_DIR } = await sqlite!.settings();
    // The schema earlier versions created with CREATE TABLE IF NOT EXISTS.
    const legacy = new Database(join(DATA_DIR, 'keys.sqlite3'));
    legacy.exec('CREATE TABLE keys (id TEXT PRIMARY KEY, account TEXT NOT NULL, hash TEXT UNIQUE NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT NULL)');
    const key = `ck_${'L'.repeat(43)}`;
    legacy.prepare('INSERT INTO keys VALUES (?, ?, ?, ?, NULL)').run('key_0123456789ab', 'oldco', hashKey(key), '2024-01-02T03:04:05.000Z');
    legacy.close();

    const database = openSqlDatabase({ DATA_DIR });
    try {
      expect(await database.migrate()).toEqual(['0001_accounts_and_keys', '0003_usage_ledger_credit_limits']);
      expect(await new SqlKeyStore(database).lookup(key)).toEqual({ status: 'active', id: 'key_0123456789ab', account: 'oldco' });
      expect(await database.db.selectFrom('accounts').selectAll().execute()).toEqual([{ name: 'oldco', created_at: '2024-01-02T03:04:05.000Z' }]);
    } finally {
      await database.close();
    }
  });
});
