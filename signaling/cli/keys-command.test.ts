import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './program.ts';
import type { KeyStore } from '../keys/key-store.ts';
import { openSqlDatabase } from '../stores/sql/sql-database.ts';
import { SqlKeyStore } from '../stores/sql/sql-key-store.ts';
import { postgresAvailable, startPostgres, type TestPostgres } from '../testing/postgres-server.ts';
import { freePort } from '../testing/server-process.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEY_LINE = /^ck_[A-Za-z0-9_-]{43}$/;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parley-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function runIn(env: Record<string, string>, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { env, stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}
const run = (...argv: string[]) => runIn({ DATA_DIR: dir }, argv);

/** What the server opens: a store on the same database. */
async function withServerStore<T>(use: (store: KeyStore) => Promise<T>, settings: { DATA_DIR: string; DATABASE_URL?: string } = { DATA_DIR: dir }): Promise<T> {
  const database = openSqlDatabase(settings);
  try {
    await database.migrate();
    return await use(new SqlKeyStore(database));
  } finally {
    await database.close();
  }
}
const accountOf = async (store: KeyStore, key: string) => {
  const r = await store.lookup(key);
  return r.status === 'active' ? { id: r.id, account: r.account } : null;
};
const lines = (s: string) => s.trimEnd().split('\n');
const idOf = (stdout: string) => /created (key_\w+)/.exec(stdout)?.[1] ?? '';

describe('parley keys', () => {
  it('create prints a human line then the key alone as the last line, once', async () => {
    const r = await run('keys', 'create', '--account', 'acme');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = lines(r.stdout);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^created key_[0-9a-f]{12} for account acme; store it now, it is not shown again$/);
    const key = out.at(-1) ?? '';
    expect(key).toMatch(KEY_LINE);
    expect(r.stdout.split(key)).toHaveLength(2);
    await withServerStore(async (store) => expect((await accountOf(store, key))?.account).toBe('acme'));
  });

  it('list shows id/account/created/revoked and never the key', async () => {
    const a = await run('keys', 'create', '--account', 'acme');
    const key = lines(a.stdout).at(-1) ?? '';
    const id = idOf(a.stdout);
    await run('keys', 'create', '--account', 'beta');
    expect(await run('keys', 'revoke', id)).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    const r = await run('keys', 'list');
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]?.split(/\s+/)).toEqual(['id', 'account', 'created', 'revoked']);
    expect(out).toHaveLength(3);
    const row = out.find((l) => l.startsWith(id)) ?? '';
    expect(row.split(/\s+/)).toEqual([id, 'acme', expect.stringMatching(/^\d{4}-/), expect.stringMatching(/^\d{4}-/)]);
    expect(out.find((l) => l.includes('beta'))?.trimEnd().endsWith('-')).toBe(true);
    expect(r.stdout).not.toContain(key);
    expect(r.stdout).not.toContain('ck_');
  });

  it('--data-dir wins over DATA_DIR', async () => {
    const other = mkdtempSync(join(tmpdir(), 'parley-cli-other-'));
    try {
      expect((await run('keys', '--data-dir', other, 'create', '--account', 'acme')).code).toBe(0);
      expect(lines((await run('keys', 'list')).stdout)).toHaveLength(1);
      expect(lines((await run('keys', '--data-dir', other, 'list')).stdout)).toHaveLength(2);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('revoke exits 1 for unknown or already revoked ids', async () => {
    const id = idOf((await run('keys', 'create', '--account', 'acme')).stdout);
    expect((await run('keys', 'revoke', id)).code).toBe(0);
    const again = await run('keys', 'revoke', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already revoked/);
    const unknown = await run('keys', 'revoke', 'key_nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no key with id/);
    expect(unknown.stdout).toBe('');
  });

  it('--help on every command; usage mistakes exit 2 with one message and no stack trace', async () => {
    for (const argv of [['--help'], ['keys', '--help'], ['keys', 'create', '--help'], ['keys', 'list', '-h'], ['keys', 'revoke', '--help'], ['start', '--help'], ['sessions', '--help'], ['migrate', '--help']]) {
      const help = await run(...argv);
      expect(help.code, argv.join(' ')).toBe(0);
      expect(help.stdout, argv.join(' ')).toMatch(/^Usage: parley/);
    }
    expect((await run('--help')).stdout).toMatch(/start .*\n.*keys.*\n.*sessions.*\n.*migrate/s);
    for (const argv of [[], ['frobnicate'], ['--bogus'], ['keys'], ['keys', 'create'], ['keys', 'create', '--account'], ['keys', 'revoke'], ['keys', 'revoke', 'a', 'b'], ['keys', 'list', 'x'], ['keys', 'list', '--account', 'a'], ['sessions'], ['sessions', 'x'], ['sessions', '--bogus'], ['migrate', 'x']]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).not.toBe('');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).toBe('');
    }
    const bad = await run('keys', 'create', '--account', 'a b');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^parley: invalid account name/);
  });

  it.each([['start'], ['keys', 'list']])('%s reads the server\'s configuration: a bad setting is exit 2, naming the variable', async (...argv) => {
    let stderr = '';
    const code = await runCli(argv, { env: { PORT: 'eighty', DATA_DIR: dir }, stdout: () => undefined, stderr: (s) => (stderr += s) });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^parley: invalid configuration:\n {2}PORT: /);
  });
});

describe('parley keys as a child process (the sources, as `npm run dev` would run them)', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'signaling/cli/parley.ts', 'keys', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('create prints the key last; a separate store instance (the server) accepts it; list hides it', async () => {
    const stdout = execFileSync(process.execPath, ['--import', 'tsx', 'signaling/cli/parley.ts', 'keys', 'create', '--account', 'acme'], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const key = lines(stdout).at(-1) ?? '';
    expect(key).toMatch(KEY_LINE);
    await withServerStore(async (server) => {
      const hit = await accountOf(server, key);
      expect(hit?.account).toBe('acme');
      const listed = cli('list');
      expect(listed.status).toBe(0);
      expect(listed.stdout).toContain(hit?.id);
      expect(listed.stdout).not.toContain(key);
      // Revocation by the CLI is seen by the already-open server store.
      expect(cli('revoke', hit?.id ?? '').status).toBe(0);
      expect(await accountOf(server, key)).toBeNull();
      const again = cli('revoke', hit?.id ?? '');
      expect(again.status).toBe(1);
      expect(again.stderr).not.toMatch(/\n\s+at /);
    });
  }, 60_000);
});

describe.skipIf(!postgresAvailable())('parley keys on PostgreSQL (DATABASE_URL): the same commands, the same output', () => {
  let pgServer: TestPostgres;
  beforeAll(async () => {
    pgServer = await startPostgres();
  });
  afterAll(() => pgServer.close());

  it('create, list and revoke; a server store on the same database sees each change', async () => {
    const DATABASE_URL = await pgServer.createDatabase();
    const cli = (...argv: string[]) => runIn({ DATA_DIR: dir, DATABASE_URL }, ['keys', ...argv]);
    const created = await cli('create', '--account', 'acme');
    expect(created.code).toBe(0);
    const key = lines(created.stdout).at(-1) ?? '';
    expect(key).toMatch(KEY_LINE);
    const id = idOf(created.stdout);
    await withServerStore(async (store) => {
      expect(await accountOf(store, key)).toEqual({ id, account: 'acme' });
      const listed = await cli('list');
      expect(lines(listed.stdout)[1]?.split(/\s+/)).toEqual([id, 'acme', expect.stringMatching(/^\d{4}-/), '-']);
      expect(listed.stdout).not.toContain(key);
      expect(await cli('revoke', id)).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
      expect(await accountOf(store, key)).toBeNull();
      expect((await cli('revoke', id)).stderr).toMatch(/already revoked/);
    }, { DATA_DIR: dir, DATABASE_URL });
    // Nothing was written to DATA_DIR: the keys live in PostgreSQL.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an unreachable database is one line on stderr and exit code 1', async () => {
    const r = await runIn({ DATA_DIR: dir, DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nothing` }, ['keys', 'list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^parley: error: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
