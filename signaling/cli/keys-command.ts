import { Command } from 'commander';
import { InvalidAccountError, type KeyStore } from '../keys/key-store.ts';
import { SqlKeyStore } from '../stores/sql/sql-key-store.ts';
import { UsageError, type CliIo } from './cli-io.ts';
import { databaseSettings, withDatabase } from './database.ts';
import { ACCOUNT_COMMANDS, ACCOUNT_USAGE, AccountUsageError, runAccountCommand } from '../usage/cli/account-commands.ts';

/** `parley keys create|list|revoke`: persistent keys in the server's database, PostgreSQL or SQLite. */
export function keysCommand(io: CliIo): Command {
  const keys = new Command('keys')
    .description('create, list and revoke persistent keys (ck_…) in PostgreSQL (DATABASE_URL) or SQLite in DATA_DIR')
    .option('--data-dir <dir>', 'where keys.sqlite3 lives when DATABASE_URL is unset (default: DATA_DIR, else ./data)');
  const withStore = (run: (store: KeyStore) => Promise<void>): Promise<void> =>
    withDatabase(io, keys, async (database) => {
      try {
        await run(new SqlKeyStore(database));
      } catch (error) {
        if (error instanceof InvalidAccountError) throw new UsageError(error.message);
        throw error;
      }
    });

  keys
    .command('create')
    .description('create a persistent key; it is printed once, alone on the last line')
    .requiredOption('--account <name>', 'the account the key belongs to')
    .action((options: { account: string }) =>
      withStore(async (store) => {
        const created = await store.create(options.account);
        io.stdout(`created ${created.id} for account ${created.account}; store it now, it is not shown again\n`);
        io.stdout(`${created.key}\n`);
      }),
    );

  keys
    .command('list')
    .description('list keys: id, account, created, revoked (never the keys themselves)')
    .action(() =>
      withStore(async (store) => {
        const rows = (await store.list()).map((k) => [k.id, k.account, k.createdAt, k.revokedAt ?? '-']);
        const table = [['id', 'account', 'created', 'revoked'], ...rows];
        const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
        for (const row of table) io.stdout(`${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`);
      }),
    );

  keys
    .command('revoke')
    .description('revoke a key: no new exchanges; scoped keys already issued stay valid until they expire')
    .argument('<id>', 'the key id (key_…), as `keys list` shows it')
    .action((id: string) =>
      withStore(async (store) => {
        const result = await store.revoke(id);
        if (result === 'revoked') return io.stdout(`revoked ${id}\n`);
        throw new Error(result === 'unknown' ? `no key with id ${JSON.stringify(id)}` : `${id} is already revoked`);
      }),
    );
  // The account commands (usage, credit, limits) keep their own option parsing: their words
  // pass through to it unchanged, so `npm run keys -- usage --account acme` works as before.
  for (const name of ACCOUNT_COMMANDS) {
    keys
      .command(name)
      .description(`the account's ${name}; see \`parley keys ${name} --help\``)
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .argument('[options...]')
      .action(async (words: string[]) => {
        if (words.includes('--help') || words.includes('-h')) return io.stdout(`usage: parley keys <command>\n\n${ACCOUNT_USAGE}`);
        try {
          const code = await runAccountCommand(name, words, databaseSettings(io, keys), io);
          if (code !== 0) throw new Error(`${name} failed`);
        } catch (error) {
          if (error instanceof AccountUsageError || error instanceof InvalidAccountError) throw new UsageError(error.message);
          throw error;
        }
      });
  }
  return keys;
}
