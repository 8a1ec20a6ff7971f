import type { ReportKind, ReportRecord, ReportStore } from '../../one-shot-store.ts';
import type { SqlDatabase } from './sql-database.ts';

/** Reports in PostgreSQL's `reports` table, the whole record as jsonb beside indexed columns. */
export class SqlReportStore implements ReportStore {
  constructor(private readonly database: SqlDatabase) {}

  async append(kind: ReportKind, record: ReportRecord): Promise<void> {
    await this.database.health.run(() =>
      this.database.db
        .insertInto('reports')
        .values({ id: record.id, kind, account: record.account, session_id: record.session_id, received_at: record.received_at, body: JSON.stringify(record) })
        .execute(),
    );
  }
}
