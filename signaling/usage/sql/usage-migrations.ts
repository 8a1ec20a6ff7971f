import { Migrator, type Kysely, type Migration } from 'kysely';

const REAL = 'double precision';

/**
 * The usage schema's history, oldest first; never edit one that has shipped, add the next. Only
 * what SQLite and PostgreSQL both understand.
 */
export const USAGE_MIGRATIONS: Record<string, Migration> = {
  '0101_usage_ledger_credit_limits': {
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
        ledger = ledger.addColumn(meter, REAL, (c) => c.notNull().defaultTo(0));
      }
      for (const meter of ['llm_input_tokens', 'llm_output_tokens', 'think_input_tokens', 'think_output_tokens', 'tts_chars', 'tool_calls', 'llm_tokens_estimated', 'think_tokens_estimated']) {
        ledger = ledger.addColumn(meter, 'integer', (c) => c.notNull().defaultTo(0));
      }
      await ledger.addColumn('units', REAL, (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('usage_ledger_account_at').on('usage_ledger').columns(['account', 'at']).execute();
      await db.schema.createIndex('usage_ledger_account_session').on('usage_ledger').columns(['account', 'session_id']).execute();
      await db.schema
        .createTable('credit')
        .addColumn('account', 'text', (c) => c.primaryKey())
        .addColumn('balance', REAL, (c) => c.notNull())
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

/**
 * Runs the usage migrations (Kysely's migrator: recorded in their own table, serialised across
 * processes by its lock); resolves with the names that ran.
 */
export async function migrateUsage(db: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => USAGE_MIGRATIONS },
    migrationTableName: 'usage_migration',
    migrationLockTableName: 'usage_migration_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw new Error(`usage schema migration failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
