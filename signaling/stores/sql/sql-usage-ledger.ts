import { sql } from 'kysely';
import { METERS, type Meter } from '../../../session/protocol/usage.ts';
import type { LedgerEntry, MeterTotals, UsageLedger, UsageQuery, UsageReport } from '../../usage/usage-ports.ts';
import { ledgerRow } from './ledger-rows.ts';
import type { SqlDatabase } from './sql-database.ts';
import { sqliteLedgerWrites } from './sqlite-ledger-writes.ts';

/**
 * The ledger on SQL, one implementation for SQLite and PostgreSQL. A batch of new entries is one
 * multi-row INSERT … ON CONFLICT DO NOTHING RETURNING (a retried write skips what is already
 * there) and one credit UPDATE per account for what was really inserted, in one transaction.
 * Every transaction starts with a write, so SQLite takes its write lock up front and waits out a
 * CLI writing the same file instead of failing. Failures are StoreUnavailableError (the
 * database's health), which the ledger writer answers by keeping the entries and retrying.
 */
export class SqlUsageLedger implements UsageLedger {
  private readonly db;
  private readonly health;
  /** SQLite's faster way to do what record() does (sqlite-ledger-writes.ts); `portable` skips it. */
  private readonly writes;

  constructor(database: SqlDatabase, options: { portable?: boolean } = {}) {
    this.db = database.db;
    this.health = database.health;
    this.writes = database.sqliteFile && !options.portable ? sqliteLedgerWrites(database.sqliteFile) : undefined;
  }

  async record(entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const writes = this.writes;
    if (writes && (await this.health.run(async () => writes(entries)))) return;
    const now = new Date().toISOString();
    await this.health.run(() => this.db.transaction().execute(async (trx) => {
      const inserted = await trx.insertInto('usage_ledger').values(entries.map(ledgerRow)).onConflict((oc) => oc.column('id').doNothing()).returning(['account', 'units']).execute();
      const spent = new Map<string, number>();
      for (const row of inserted) spent.set(row.account, (spent.get(row.account) ?? 0) + Number(row.units));
      for (const [account, units] of spent) {
        if (units !== 0) await trx.updateTable('credit').set({ balance: sql`balance - ${units}`, updated_at: now }).where('account', '=', account).execute();
      }
    }));
  }

  async revise(entry: LedgerEntry): Promise<void> {
    const row = ledgerRow(entry);
    await this.health.run(() => this.db.transaction().execute(async (trx) => {
      // The difference against what is stored, so revising twice takes it once.
      const stored = trx.selectFrom('usage_ledger').select('units').where('id', '=', entry.id);
      await trx
        .updateTable('credit')
        .set({ balance: sql`balance - (${row.units} - coalesce((${stored}), ${row.units}))`, updated_at: new Date().toISOString() })
        .where('account', '=', entry.account)
        .execute();
      const { id: _id, ...values } = row;
      await trx.updateTable('usage_ledger').set(values).where('id', '=', entry.id).execute();
    }));
  }

  report(query: UsageQuery): Promise<UsageReport> {
    return this.health.run(() => this.reportOf(query));
  }

  private async reportOf(query: UsageQuery): Promise<UsageReport> {
    let scope = this.db.selectFrom('usage_ledger').where('account', '=', query.account);
    if (query.from !== undefined) scope = scope.where('at', '>=', query.from);
    if (query.to !== undefined) scope = scope.where('at', '<', query.to);
    if (query.sessionId !== undefined) scope = scope.where('session_id', '=', query.sessionId);
    const [totals] = await scope.select(sums()).execute();
    const sessions = await scope
      .select(sums())
      .select((eb) => ['session_id', eb.fn.min('at').as('first_at'), eb.fn.max('at').as('last_at'), eb.fn.count('turn_id').as('turns')])
      .groupBy('session_id')
      .orderBy('last_at', 'desc')
      .orderBy('session_id')
      .limit(query.sessionLimit + 1)
      .execute();
    const days = await scope.select(sums()).select('day').groupBy('day').orderBy('day').execute();
    return {
      totals: totalsOf(totals ?? {}),
      sessions: sessions.slice(0, query.sessionLimit).map((s) => ({
        session_id: s.session_id,
        first_at: String(s.first_at),
        last_at: String(s.last_at),
        turns: Number(s.turns),
        ...totalsOf(s),
      })),
      days: days.map((d) => ({ day: d.day, ...totalsOf(d) })),
      truncated: sessions.length > query.sessionLimit,
    };
  }
}

/** SUM of every meter and the units, MAX of the estimate flags (any estimated row marks the sum). */
function sums() {
  return [
    ...METERS.map((meter) => sql<number | string | null>`sum(${sql.ref(meter)})`.as(meter)),
    sql<number | string | null>`sum(units)`.as('units'),
    sql<number | string | null>`max(llm_tokens_estimated)`.as('llm_tokens_estimated'),
    sql<number | string | null>`max(think_tokens_estimated)`.as('think_tokens_estimated'),
  ];
}

/** PostgreSQL returns sums of integers as strings, and an empty SUM is NULL on both. */
function totalsOf(row: Record<string, unknown>): MeterTotals {
  const totals = {} as Record<Meter, number>;
  for (const meter of METERS) totals[meter] = round(Number(row[meter] ?? 0));
  return {
    ...totals,
    units: round(Number(row.units ?? 0)),
    llm_tokens_estimated: Number(row.llm_tokens_estimated ?? 0) > 0,
    think_tokens_estimated: Number(row.think_tokens_estimated ?? 0) > 0,
  };
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6;
