import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openSqlDatabase } from '../stores/sql/sql-database.ts';
import { SqlKeyStore } from '../stores/sql/sql-key-store.ts';
import { freePort } from '../testing/server-process.ts';
import { postgresAvailable, startPostgres, type TestPostgres } from '../testing/postgres-server.ts';
import { runKeysCli } from './cli.ts';
import type { KeyStore } from './key-store.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX_CLI = join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
const KEY_LINE = /^ck_[A-Za-z0-9_-]{43}$/;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parley-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runKeysCli(argv, { DATA_DIR: dir }, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** What the server opens: a store on the same database. */
async function withServerStore<T>(use: (store: KeyStore) => Promise<T>): Promise<T> {
  const database = openSqlDatabase({ DATA_DIR: dir });
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

describe('runKeysCli', () => {
  it('create prints a human line then the key alone as the last line, once', async () => {
    const r = await run('create', '--account', 'acme');
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
    const a = lines((await run('create', '--account', 'acme')).stdout);
    const key = a.at(-1) ?? '';
    const id = /created (key_\w+)/.exec(a[0] ?? '')?.[1] ?? '';
    await run('create', '--account', 'beta');
    expect(await run('revoke', id)).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    const r = await run('list');
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

  it('revoke exits 1 for unknown or already revoked ids', async () => {
    const id = /created (key_\w+)/.exec((await run('create', '--account', 'acme')).stdout)?.[1] ?? '';
    expect((await run('revoke', id)).code).toBe(0);
    const again = await run('revoke', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already revoked/);
    const unknown = await run('revoke', 'key_nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no key with id/);
    expect(unknown.stdout).toBe('');
  });

  it('usage and argument errors', async () => {
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage:/);
    expect((await run('create', '-h')).code).toBe(0);
    for (const argv of [[], ['frobnicate'], ['--bogus'], ['create'], ['create', '--account'], ['revoke'], ['revoke', 'a', 'b'], ['list', 'x'], ['list', '--account', 'a']]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^keys: /);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.stdout).toBe('');
    }
    const bad = await run('create', '--account', 'a b');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid account name/);
  });
});

describe('keys CLI as a child process', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [TSX_CLI, 'signaling/keys/cli.ts', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('create prints the key last; a separate store instance (the server) accepts it; list hides it', async () => {
    const stdout = execFileSync(process.execPath, [TSX_CLI, 'signaling/keys/cli.ts', 'create', '--account', 'acme'], {
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

describe.skipIf(!postgresAvailable())('keys CLI on PostgreSQL (DATABASE_URL): the same commands, the same output', () => {
  let pgServer: TestPostgres;
  beforeAll(async () => {
    pgServer = await startPostgres();
  });
  afterAll(() => pgServer.close());

  it('create, list and revoke; a server store on the same database sees each change', async () => {
    const DATABASE_URL = await pgServer.createDatabase();
    const cli = async (...argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runKeysCli(argv, { DATA_DIR: dir, DATABASE_URL }, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
      return { code, stdout, stderr };
    };
    const created = await cli('create', '--account', 'acme');
    expect(created.code).toBe(0);
    const key = lines(created.stdout).at(-1) ?? '';
    expect(key).toMatch(KEY_LINE);
    const id = /created (key_\w+)/.exec(created.stdout)?.[1] ?? '';

    const server = openSqlDatabase({ DATA_DIR: dir, DATABASE_URL });
    try {
      const store = new SqlKeyStore(server);
      expect(await accountOf(store, key)).toEqual({ id, account: 'acme' });
      const listed = await cli('list');
      expect(lines(listed.stdout)[1]?.split(/\s+/)).toEqual([id, 'acme', expect.stringMatching(/^\d{4}-/), '-']);
      expect(listed.stdout).not.toContain(key);
      expect(await cli('revoke', id)).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
      expect(await accountOf(store, key)).toBeNull();
      expect((await cli('revoke', id)).stderr).toMatch(/already revoked/);
    } finally {
      await server.close();
    }
    // Nothing was written to DATA_DIR: the keys live in PostgreSQL.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an unreachable database is one line on stderr and exit code 1', async () => {
    let stderrOut = '';
    const r = await runKeysCli(['list'], { DATA_DIR: dir, DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nothing` }, { stdout: () => undefined, stderr: (s) => (stderrOut += s) });
    expect(r).toBe(1);
    expect(stderrOut).toMatch(/^keys: error: /);
    expect(stderrOut).not.toMatch(/\n\s+at /);
  });
});
