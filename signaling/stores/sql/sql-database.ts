import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrations.ts';
import type { Engine, Tables } from './schema.ts';
import { ImmediateSqliteDialect } from './sqlite-dialect.ts';
import { EngineHealth, type StoreLog } from '../unavailable.ts';

export interface SqlDatabase {
  readonly engine: Engine;
  readonly db: Kysely<Tables>;
  /** SQLite only: the file's own handle, for the ledger's synchronous prepared writes. */
  readonly sqliteFile?: Database.Database;
  /** Every store query runs through it: failures become StoreUnavailableError, outages are logged once. */
  readonly health: EngineHealth;
  /** Runs pending migrations (safe to call from several processes at once); returns their names. */
  migrate(): Promise<string[]>;
  /** One trivial query: is the database answering right now? */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface SqlSettings {
  DATA_DIR: string;
  DATABASE_URL?: string | undefined;
}

const quiet: StoreLog = { warn: () => undefined, info: () => undefined };

/**
 * PostgreSQL when DATABASE_URL is set (a pg pool), otherwise SQLite in DATA_DIR/keys.sqlite3
 * (the file earlier versions used, so an embedded deployment keeps its keys).
 */
export function openSqlDatabase(settings: SqlSettings, log: StoreLog = quiet): SqlDatabase {
  return settings.DATABASE_URL ? openPostgres(settings.DATABASE_URL, log) : openSqlite(settings.DATA_DIR, log);
}

function openSqlite(dataDir: string, log: StoreLog): SqlDatabase {
  mkdirSync(dataDir, { recursive: true });
  const file = new Database(join(dataDir, 'keys.sqlite3'));
  try {
    // WAL lets the server read while the CLI writes; busy_timeout rides out the brief write locks.
    file.pragma('journal_mode = WAL');
    file.pragma('busy_timeout = 5000');
    // With WAL, NORMAL keeps every commit through a process crash (what the usage ledger and the
    // keys promise); only an OS crash or power cut may lose the last commits. FULL would sync the
    // disk at every turn's ledger write.
    file.pragma('synchronous = NORMAL');
  } catch (error) {
    file.close();
    throw error;
  }
  return { ...wrap('sqlite', new Kysely<Tables>({ dialect: new ImmediateSqliteDialect({ database: file }) }), log), sqliteFile: file };
}

function openPostgres(url: string, log: StoreLog): SqlDatabase {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // A stopped server refuses at once; an unreachable one must not hold a request for long.
    connectionTimeoutMillis: 2000,
    query_timeout: 5000,
    idleTimeoutMillis: 30_000,
  });
  // Without a listener, an idle connection dropped by the server (a restart) would throw.
  pool.on('error', (error) => log.warn({ err: error.message }, 'an idle PostgreSQL connection failed'));
  return wrap('postgres', new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) }), log);
}

function wrap(engine: Engine, db: Kysely<Tables>, log: StoreLog): SqlDatabase {
  return {
    engine,
    db,
    health: new EngineHealth(engine, log),
    migrate: () => migrateToLatest(db as Kysely<unknown>, engine),
    async ping() {
      try {
        await sql`SELECT 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}
