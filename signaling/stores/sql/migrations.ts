import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Engine } from './schema.ts';

/**
 * The schema's history, oldest first; names sort in the order they run. Never edit a migration
 * that has shipped: add the next one. Migrations shared by both engines use only what both
 * understand; `postgresOnly` ones hold what the embedded mode keeps elsewhere.
 *
 * Kysely's migrator records what ran in `kysely_migration` and serialises concurrent runs: on
 * PostgreSQL under an advisory lock (two processes starting together migrate once), on SQLite
 * inside one immediate transaction (see sqlite-dialect.ts).
 */
const shared: Record<string, Migration> = {
  '0001_accounts_and_keys': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .ifNotExists()
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      // ifNotExists: SQLite databases made before migrations existed already have this table.
      await db.schema
        .createTable('keys')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account', 'text', (c) => c.notNull().references('accounts.name'))
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('keys_account').ifNotExists().on('keys').column('account').execute();
      // Accounts of keys created before the accounts table existed.
      await sql`INSERT INTO accounts (name, created_at)
        SELECT account, MIN(created_at) FROM keys GROUP BY account
        ON CONFLICT (name) DO NOTHING`.execute(db);
    },
  },
};

const postgresOnly: Record<string, Migration> = {
  '0002_reports': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('feedback', 'client_error')`))
        .addColumn('account', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addColumn('body', 'jsonb', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('reports_account_received').on('reports').columns(['account', 'received_at']).execute();
    },
  },
};

export function migrationsFor(engine: Engine): Record<string, Migration> {
  return engine === 'postgres' ? { ...shared, ...postgresOnly } : { ...shared };
}

/** Brings the schema to the latest version; resolves with the names of the migrations it ran. */
export async function migrateToLatest(db: Kysely<unknown>, engine: Engine): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(engine) };
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration${failed ? ` ${failed}` : ''} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
