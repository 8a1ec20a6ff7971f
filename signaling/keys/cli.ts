import { parseArgs } from 'node:util';
import { isMainModule, processOut, type CliOut } from '../cli-main.ts';
import { openCliDatabase } from '../stores/stores.ts';
import type { SqlDatabase } from '../stores/sql/sql-database.ts';
import { SqlKeyStore } from '../stores/sql/sql-key-store.ts';
import { InvalidAccountError, type KeyStore } from './key-store.ts';
import { ACCOUNT_COMMANDS, ACCOUNT_USAGE, AccountUsageError, runAccountCommand } from '../usage/cli/account-commands.ts';


const USAGE = `usage: npm run keys -- <command>

commands:
  create --account NAME   create a persistent key (ck_...); it is printed once, on the last line
  list                    list keys (ids, accounts, dates; never the keys)
  revoke ID               revoke a key; scoped keys already issued from it stay valid until expiry
${ACCOUNT_USAGE}
environment:
  DATABASE_URL            PostgreSQL (postgres://...); when unset, SQLite in DATA_DIR
  DATA_DIR                where keys.sqlite3 lives (default ./data)
`;

/** A user mistake: reported as one line on stderr, never with a stack trace. */
class UsageError extends Error {}

export type CliEnv = { DATA_DIR?: string | undefined; DATABASE_URL?: string | undefined };

/** Every command: the key commands below, and the account commands (usage, credit, limits). */
export async function runCli(argv: string[], env: CliEnv, out: CliOut): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || !ACCOUNT_COMMANDS.has(command) || rest.includes('--help') || rest.includes('-h')) return runKeysCli(argv, env, out);
  try {
    return await runAccountCommand(command, rest, env, out);
  } catch (err) {
    if (err instanceof AccountUsageError || err instanceof InvalidAccountError) {
      out.stderr(`keys: ${err.message}\n`);
      return 2;
    }
    out.stderr(`keys: error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

export async function runKeysCli(argv: string[], env: CliEnv, out: CliOut): Promise<number> {
  let values: { account?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: { account: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    out.stderr(`keys: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    out.stdout(USAGE);
    return 0;
  }
  const [cmd, ...rest] = positionals;
  if (cmd !== 'create' && cmd !== 'list' && cmd !== 'revoke') {
    out.stderr(`${cmd === undefined ? 'keys: missing command' : `keys: unknown command ${JSON.stringify(cmd)}`}\n\n${USAGE}`);
    return 2;
  }

  let database: SqlDatabase | undefined;
  try {
    if (cmd === 'create') {
      if (rest.length > 0) throw new UsageError('create takes no positional arguments');
      if (values.account === undefined) throw new UsageError('create requires --account NAME');
    } else if (values.account !== undefined) {
      throw new UsageError(`--account is only valid with create`);
    }
    if (cmd === 'list' && rest.length > 0) throw new UsageError('list takes no arguments');
    if (cmd === 'revoke' && rest.length !== 1) throw new UsageError('usage: revoke ID');

    database = await openCliDatabase(env);
    const store = new SqlKeyStore(database);
    if (cmd === 'create') return await create(store, values.account ?? '', out);
    if (cmd === 'list') return await list(store, out);
    return await revoke(store, rest[0] ?? '', out);
  } catch (err) {
    if (err instanceof UsageError || err instanceof InvalidAccountError) {
      out.stderr(`keys: ${err.message}\n`);
      return 2;
    }
    // Operational failures (unwritable DATA_DIR, locked or unreachable DB): the message is enough to act on.
    out.stderr(`keys: error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await database?.close();
  }
}

async function create(store: KeyStore, account: string, out: CliOut): Promise<number> {
  const k = await store.create(account);
  // Key alone on the last line so scripts can capture it with `tail -n1`.
  out.stdout(`created ${k.id} for account ${k.account}; store it now, it is not shown again\n`);
  out.stdout(`${k.key}\n`);
  return 0;
}

async function list(store: KeyStore, out: CliOut): Promise<number> {
  const rows = (await store.list()).map((k) => [k.id, k.account, k.createdAt, k.revokedAt ?? '-']);
  const table = [['id', 'account', 'created', 'revoked'], ...rows];
  const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
  for (const r of table) {
    out.stdout(`${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`);
  }
  return 0;
}

async function revoke(store: KeyStore, id: string, out: CliOut): Promise<number> {
  const r = await store.revoke(id);
  if (r === 'revoked') {
    out.stdout(`revoked ${id}\n`);
    return 0;
  }
  out.stderr(r === 'unknown' ? `keys: no key with id ${JSON.stringify(id)}\n` : `keys: ${id} is already revoked\n`);
  return 1;
}

if (isMainModule(import.meta.url)) {
  process.exitCode = await runCli(process.argv.slice(2), process.env, processOut);
}
