import { parseArgs } from 'node:util';
import { ACCOUNT_LIMITS, type AccountLimit } from '../../../session/protocol/usage.ts';
import { parseAccount } from '../../keys/key-store.ts';
import { openCliDatabase } from '../../stores/stores.ts';
import { SqlAccountBook } from '../../stores/sql/sql-account-book.ts';
import type { SqlDatabase } from '../../stores/sql/sql-database.ts';
import { SqlUsageLedger } from '../../stores/sql/sql-usage-ledger.ts';
import type { AccountBook, LimitOverrides, UsageLedger } from '../usage-ports.ts';
import { formatUsage, sinceInstant } from './usage-report.ts';

import type { CliIo } from '../../cli/cli-io.ts';

type CliOut = Pick<CliIo, 'stdout' | 'stderr'>;

interface UsageStore {
  ledger: UsageLedger;
  book: AccountBook;
}

export const ACCOUNT_USAGE = `  usage --account NAME [--since DATE] [--json]
                          the account's usage per day and per session (DATE: 2026-03-01 or an ISO time)
  credit --account NAME [--set N | --add N | --clear]
                          the account's credit in units: set it, add to it (--add=-5 takes), or make
                          the account unlimited again; with none of them, print it
  limits --account NAME [--max-sessions N] [--starts-per-minute N]
                        [--key-exchanges-per-minute N] [--input-text-per-second N]
                          the account's limit overrides: N ≥ 1, 0 for none on this account, or
                          "default" to follow the server's environment; with none, print them
`;

export const ACCOUNT_COMMANDS = new Set(['usage', 'credit', 'limits']);

/** A mistake the user can fix: one line on stderr, exit code 2. */
export class AccountUsageError extends Error {}

const LIMIT_FLAGS: Record<string, AccountLimit> = {
  'max-sessions': 'max_sessions',
  'starts-per-minute': 'session_starts_per_minute',
  'key-exchanges-per-minute': 'key_exchanges_per_minute',
  'input-text-per-second': 'input_text_per_second',
};

/** `parley keys usage|credit|limits …` (and `npm run keys -- …`), against the database the servers use (DATABASE_URL or DATA_DIR). */
export async function runAccountCommand(command: string, argv: string[], env: { DATA_DIR?: string | undefined; DATABASE_URL?: string | undefined }, out: CliOut): Promise<number> {
  let database: SqlDatabase | undefined;
  try {
    const options = Object.fromEntries(
      [...['account', 'since', 'set', 'add'], ...Object.keys(LIMIT_FLAGS)].map((name) => [name, { type: 'string' as const }]),
    ) as Record<string, { type: 'string' }>;
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: { ...options, json: { type: 'boolean' }, clear: { type: 'boolean' } }, allowPositionals: false, strict: true });
    } catch (error) {
      throw new AccountUsageError(error instanceof Error ? error.message : String(error));
    }
    const values = parsed.values as Record<string, string | boolean | undefined>;
    const allowed = { usage: ['account', 'since', 'json'], credit: ['account', 'set', 'add', 'clear'], limits: ['account', ...Object.keys(LIMIT_FLAGS)] }[command as 'usage'] ?? [];
    const stray = Object.keys(values).find((name) => values[name] !== undefined && !allowed.includes(name));
    if (stray) throw new AccountUsageError(`--${stray} is not an option of ${command}`);
    if (typeof values.account !== 'string') throw new AccountUsageError(`${command} requires --account NAME`);
    const account = parseAccount(values.account);
    database = await openCliDatabase(env);
    const store: UsageStore = { ledger: new SqlUsageLedger(database), book: new SqlAccountBook(database) };
    if (command === 'usage') return await usage(store, account, values, out);
    if (command === 'credit') return await credit(store, account, values, out);
    return await limits(store, account, values, out);
  } finally {
    await database?.close();
  }
}

async function usage(store: UsageStore, account: string, values: Record<string, string | boolean | undefined>, out: CliOut): Promise<number> {
  const since = typeof values.since === 'string' ? sinceInstant(values.since) : undefined;
  if (since === null) throw new AccountUsageError(`--since ${JSON.stringify(values.since)}: a date (2026-03-01) or an ISO time with Z or an offset`);
  const report = await store.ledger.report({ account, ...(since ? { from: since } : {}), sessionLimit: 1000 });
  out.stdout(values.json ? `${JSON.stringify({ account, since: since ?? null, ...report }, null, 2)}\n` : formatUsage(account, since, report));
  return 0;
}

async function credit(store: UsageStore, account: string, values: Record<string, string | boolean | undefined>, out: CliOut): Promise<number> {
  const actions = ['set', 'add', 'clear'].filter((name) => values[name] !== undefined);
  if (actions.length > 1) throw new AccountUsageError('credit takes one of --set, --add and --clear');
  const amount = (name: 'set' | 'add'): number => {
    const n = Number(values[name]);
    if (values[name] === '' || !Number.isFinite(n) || Math.abs(n) > 1e12) throw new AccountUsageError(`--${name} needs a number of units`);
    return n;
  };
  let balance: number | null;
  if (values.set !== undefined) await store.book.setCredit(account, (balance = amount('set')));
  else if (values.add !== undefined) balance = await store.book.addCredit(account, amount('add'));
  else if (values.clear) await store.book.setCredit(account, (balance = null));
  else balance = await store.book.credit(account);
  out.stdout(balance === null ? `${account}: unlimited (no credit balance)\n` : `${account}: ${round(balance)} units\n`);
  return 0;
}

async function limits(store: UsageStore, account: string, values: Record<string, string | boolean | undefined>, out: CliOut): Promise<number> {
  const changes: Partial<LimitOverrides> = {};
  for (const [flag, limit] of Object.entries(LIMIT_FLAGS)) {
    const value = values[flag];
    if (typeof value !== 'string') continue;
    if (value === 'default') changes[limit] = null;
    else if (/^\d{1,9}$/.test(value)) changes[limit] = Number(value);
    else throw new AccountUsageError(`--${flag} needs a whole number ≥ 0 or "default"`);
  }
  const overrides = Object.keys(changes).length > 0 ? await store.book.setLimits(account, changes) : await store.book.limits(account);
  for (const limit of ACCOUNT_LIMITS) {
    const value = overrides[limit];
    out.stdout(`${limit.padEnd(28)}${value === null ? 'default' : value === 0 ? '0 (none for this account)' : value}\n`);
  }
  return 0;
}

const round = (value: number): number => Math.round(value * 1e6) / 1e6;
