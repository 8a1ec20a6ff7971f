import { sql } from 'kysely';
import { ACCOUNT_LIMITS } from '../../../session/protocol/usage.ts';
import type { AccountBook, LimitOverrides } from '../../usage/usage-ports.ts';
import type { SqlDatabase } from './sql-database.ts';

const NO_OVERRIDES: LimitOverrides = { max_sessions: null, session_starts_per_minute: null, key_exchanges_per_minute: null, input_text_per_second: null };

/** Credit balances and limit overrides on SQL (SQLite or PostgreSQL, same queries). */
export class SqlAccountBook implements AccountBook {
  private readonly db;
  private readonly health;

  constructor(database: SqlDatabase) {
    this.db = database.db;
    this.health = database.health;
  }

  async credit(account: string): Promise<number | null> {
    const row = await this.health.run(() => this.db.selectFrom('credit').select('balance').where('account', '=', account).executeTakeFirst());
    return row ? Number(row.balance) : null;
  }

  async setCredit(account: string, units: number | null): Promise<void> {
    const updated_at = new Date().toISOString();
    await this.health.run(async () => {
      if (units === null) await this.db.deleteFrom('credit').where('account', '=', account).execute();
      else await this.db.insertInto('credit').values({ account, balance: units, updated_at }).onConflict((oc) => oc.column('account').doUpdateSet({ balance: units, updated_at })).execute();
    });
  }

  async addCredit(account: string, units: number): Promise<number> {
    const updated_at = new Date().toISOString();
    // One statement: a top-up racing the ledger's deductions loses neither.
    const row = await this.health.run(() =>
      this.db
        .insertInto('credit')
        .values({ account, balance: units, updated_at })
        .onConflict((oc) => oc.column('account').doUpdateSet({ balance: sql`credit.balance + ${units}`, updated_at }))
        .returning('balance')
        .executeTakeFirstOrThrow(),
    );
    return Number(row.balance);
  }

  async limits(account: string): Promise<LimitOverrides> {
    const row = await this.health.run(() => this.db.selectFrom('account_limits').select(ACCOUNT_LIMITS).where('account', '=', account).executeTakeFirst());
    return row ? overridesOf(row) : { ...NO_OVERRIDES };
  }

  async setLimits(account: string, overrides: Partial<LimitOverrides>): Promise<LimitOverrides> {
    const updated_at = new Date().toISOString();
    const changed = Object.fromEntries(ACCOUNT_LIMITS.filter((name) => overrides[name] !== undefined).map((name) => [name, overrides[name]])) as Partial<LimitOverrides>;
    await this.health.run(() =>
      this.db
        .insertInto('account_limits')
        .values({ ...NO_OVERRIDES, ...changed, account, updated_at })
        .onConflict((oc) => oc.column('account').doUpdateSet({ ...changed, updated_at }))
        .execute(),
    );
    return this.limits(account);
  }
}

function overridesOf(row: Record<string, unknown>): LimitOverrides {
  const overrides = { ...NO_OVERRIDES };
  for (const name of ACCOUNT_LIMITS) overrides[name] = row[name] === null || row[name] === undefined ? null : Number(row[name]);
  return overrides;
}
