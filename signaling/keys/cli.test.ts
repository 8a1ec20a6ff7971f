import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runKeysCli } from './cli.ts';
import { KeyStore } from './key-store.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX_CLI = join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
const KEY_LINE = /^ck_[A-Za-z0-9_-]{43}$/;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parley-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(...argv: string[]): { code: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const code = runKeysCli(argv, { DATA_DIR: dir }, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}
const lines = (s: string) => s.trimEnd().split('\n');

describe('runKeysCli', () => {
  it('create prints a human line then the key alone as the last line, once', () => {
    const r = run('create', '--account', 'acme');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = lines(r.stdout);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^created key_[0-9a-f]{12} for account acme; store it now, it is not shown again$/);
    const key = out.at(-1) ?? '';
    expect(key).toMatch(KEY_LINE);
    expect(r.stdout.split(key)).toHaveLength(2);
    const store = KeyStore.open(dir);
    try {
      expect(store.verify(key)?.account).toBe('acme');
    } finally {
      store.close();
    }
  });

  it('list shows id/account/created/revoked and never the key', () => {
    const a = lines(run('create', '--account', 'acme').stdout);
    const key = a.at(-1) ?? '';
    const id = /created (key_\w+)/.exec(a[0] ?? '')?.[1] ?? '';
    run('create', '--account', 'beta');
    expect(run('revoke', id)).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    const r = run('list');
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

  it('revoke exits 1 for unknown or already revoked ids', () => {
    const id = /created (key_\w+)/.exec(run('create', '--account', 'acme').stdout)?.[1] ?? '';
    expect(run('revoke', id).code).toBe(0);
    const again = run('revoke', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already revoked/);
    const unknown = run('revoke', 'key_nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no key with id/);
    expect(unknown.stdout).toBe('');
  });

  it('usage and argument errors', () => {
    const help = run('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage:/);
    expect(run('create', '-h').code).toBe(0);
    for (const argv of [[], ['frobnicate'], ['--bogus'], ['create'], ['create', '--account'], ['revoke'], ['revoke', 'a', 'b'], ['list', 'x'], ['list', '--account', 'a']]) {
      const r = run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^keys: /);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.stdout).toBe('');
    }
    const bad = run('create', '--account', 'a b');
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

  it('create prints the key last; a separate store instance (the server) accepts it; list hides it', () => {
    const stdout = execFileSync(process.execPath, [TSX_CLI, 'signaling/keys/cli.ts', 'create', '--account', 'acme'], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const key = lines(stdout).at(-1) ?? '';
    expect(key).toMatch(KEY_LINE);
    const server = KeyStore.open(dir);
    try {
      const hit = server.verify(key);
      expect(hit?.account).toBe('acme');
      const listed = cli('list');
      expect(listed.status).toBe(0);
      expect(listed.stdout).toContain(hit?.id);
      expect(listed.stdout).not.toContain(key);
      // Revocation by the CLI is seen by the already-open server store.
      expect(cli('revoke', hit?.id ?? '').status).toBe(0);
      expect(server.verify(key)).toBeNull();
      const again = cli('revoke', hit?.id ?? '');
      expect(again.status).toBe(1);
      expect(again.stderr).not.toMatch(/\n\s+at /);
    } finally {
      server.close();
    }
  }, 60_000);
});
