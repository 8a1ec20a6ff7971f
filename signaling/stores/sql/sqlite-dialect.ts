import { CompiledQuery, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type DialectAdapter, type Driver } from 'kysely';

/**
 * Kysely's SQLite dialect, with every transaction begun IMMEDIATE. A deferred transaction takes
 * the write lock only at its first write, and in WAL mode a reader that then wants to write
 * after another process wrote fails at once (SQLITE_BUSY_SNAPSHOT) instead of waiting. IMMEDIATE
 * takes the lock up front and waits out busy_timeout, so the server and the keys CLI (two
 * processes on one file) serialise cleanly, migrations included: SQLite's DDL is transactional,
 * so each migration run is one transaction.
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.config);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }

  constructor(private readonly config: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(config);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
