import type { ReportFilter, ReportKind, ReportListing, ReportRecord, ReportStore } from '../../one-shot-store.ts';
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

  async list(filter: ReportFilter): Promise<ReportListing> {
    const rows = await this.database.health.run(() => {
      let query = this.database.db.selectFrom('reports').select(['kind', 'body']).where('account', '=', filter.account);
      if (filter.from !== undefined) query = query.where('received_at', '>=', filter.from);
      if (filter.to !== undefined) query = query.where('received_at', '<', filter.to);
      if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
      if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
      return query.orderBy('received_at', 'desc').orderBy('id', 'desc').limit(filter.limit + 1).execute();
    });
    const reports = rows.slice(0, filter.limit).map((row) => {
      const { account: _account, ...report } = (typeof row.body === 'string' ? JSON.parse(row.body) : row.body) as Record<string, unknown>;
      return { kind: row.kind, ...report };
    });
    return { reports, truncated: rows.length > filter.limit };
  }
}
