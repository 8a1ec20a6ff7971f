import type { ReportKind, ReportRecord, ReportStore } from '../../one-shot-store.ts';
import type { SqlDatabase } from './sql-database.ts';

/**
 * Reports in PostgreSQL's `reports` table, the whole record as jsonb beside indexed columns.
 * Each kind keeps its newest `maxRows` (REPORTS_MAX_ROWS): older ones go as new ones arrive, so
 * a client that reports in a loop cannot grow the table without bound.
 */
export class SqlReportStore implements ReportStore {
  constructor(
    private readonly database: SqlDatabase,
    private readonly maxRows: number,
  ) {}

  async append(kind: ReportKind, record: ReportRecord): Promise<void> {
    await this.database.health.run(() =>
      this.database.db
        .insertInto('reports')
        .values({ id: record.id, kind, account: record.account, session_id: record.session_id, received_at: record.received_at, body: JSON.stringify(record) })
        .execute(),
    );
    await this.database.health.run(() =>
      this.database.db
        .deleteFrom('reports')
        .where('kind', '=', kind)
        .where('id', 'not in', (db) => db.selectFrom('reports').select('id').where('kind', '=', kind).orderBy('received_at', 'desc').orderBy('id', 'desc').limit(this.maxRows))
        .execute(),
    );
  }
}
