import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Engine } from './schema.ts';

/** SQLite stores it as REAL; PostgreSQL as an 8-byte float. */
const DOUBLE = 'double precision';

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
  '0003_usage_ledger_credit_limits': {
    // The usage ledger (one row per metered interval), credit balances, per-account limit overrides.
    async up(db: Kysely<unknown>) {
      let ledger = db.schema
        .createTable('usage_ledger')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('turn_id', 'text')
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull());
      for (const meter of ['session_s', 'audio_in_s', 'audio_out_s', 'audio_heard_s', 'asr_s']) {
        ledger = ledger.addColumn(meter, DOUBLE, (c) => c.notNull().defaultTo(0));
      }
      for (const meter of ['llm_input_tokens', 'llm_output_tokens', 'think_input_tokens', 'think_output_tokens', 'tts_chars', 'tool_calls', 'llm_tokens_estimated', 'think_tokens_estimated']) {
        ledger = ledger.addColumn(meter, 'integer', (c) => c.notNull().defaultTo(0));
      }
      await ledger.addColumn('units', DOUBLE, (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('usage_ledger_account_at').on('usage_ledger').columns(['account', 'at']).execute();
      await db.schema.createIndex('usage_ledger_account_session').on('usage_ledger').columns(['account', 'session_id']).execute();
      await db.schema
        .createTable('credit')
        .addColumn('account', 'text', (c) => c.primaryKey())
        .addColumn('balance', DOUBLE, (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('account_limits')
        .addColumn('account', 'text', (c) => c.primaryKey())
        .addColumn('max_sessions', 'integer')
        .addColumn('session_starts_per_minute', 'integer')
        .addColumn('key_exchanges_per_minute', 'integer')
        .addColumn('input_text_per_second', 'integer')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
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
  const all = engine === 'postgres' ? { ...shared, ...postgresOnly } : { ...shared };
  // Kysely runs them in name order; kept sorted so a listing reads the same.
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
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
