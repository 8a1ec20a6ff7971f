import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Usage } from '../../../session/protocol/usage.ts';
import { runCli as runParley } from '../../cli/program.ts';

const runCli = (argv: string[], env: Record<string, string | undefined>, out: { stdout(s: string): void; stderr(s: string): void }) =>
  runParley(['keys', ...argv], { env, ...out });
import { postgresAvailable, startPostgres, type TestPostgres } from '../../testing/postgres-server.ts';
import { openUsageStore } from '../../testing/usage-store.ts';

/** `npm run keys -- usage|credit|limits`: what the operator types, against a real data directory. */

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parley-accounts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { DATA_DIR: dir }, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

const ZERO: Usage = {
  session_s: 0, audio_in_s: 0, audio_out_s: 0, audio_heard_s: 0, asr_s: 0,
  llm_input_tokens: 0, llm_output_tokens: 0, think_input_tokens: 0, think_output_tokens: 0,
  tts_chars: 0, tool_calls: 0, llm_tokens_estimated: false, think_tokens_estimated: false,
};

async function seed(): Promise<void> {
  const store = await openUsageStore({ DATA_DIR: dir });
  await store.ledger.record([
    { id: 'u:1', account: 'acme', sessionId: 'call-1', turnId: 't1', at: '2026-03-01T10:00:00.000Z', usage: { ...ZERO, session_s: 30, llm_output_tokens: 12 }, units: 30 },
    { id: 'u:2', account: 'acme', sessionId: 'call-2', turnId: 't2', at: '2026-03-02T10:00:00.000Z', usage: { ...ZERO, session_s: 5.5, audio_in_s: 2.25 }, units: 5.5 },
    { id: 'u:3', account: 'beta', sessionId: 'call-9', turnId: 't9', at: '2026-03-02T11:00:00.000Z', usage: { ...ZERO, session_s: 99 }, units: 99 },
  ]);
  await store.close();
}

describe('npm run keys -- credit', () => {
  it('prints, sets, adds, takes and clears the balance', async () => {
    expect(await run('credit', '--account', 'acme')).toEqual({ code: 0, stdout: 'acme: unlimited (no credit balance)\n', stderr: '' });
    expect((await run('credit', '--account', 'acme', '--set', '100')).stdout).toBe('acme: 100 units\n');
    expect((await run('credit', '--account', 'acme', '--add', '25.5')).stdout).toBe('acme: 125.5 units\n');
    expect((await run('credit', '--account', 'acme', '--add=-5')).stdout).toBe('acme: 120.5 units\n');
    expect((await run('credit', '--account', 'acme')).stdout).toBe('acme: 120.5 units\n');
    expect((await run('credit', '--account', 'acme', '--clear')).stdout).toBe('acme: unlimited (no credit balance)\n');
  });

  it.each([
    [['credit'], 'requires --account'],
    [['credit', '--account', 'bad name'], 'invalid account name'],
    [['credit', '--account', 'acme', '--set', 'lots'], '--set needs a number'],
    [['credit', '--account', 'acme', '--set', '1', '--add', '2'], 'one of --set, --add and --clear'],
    [['credit', '--account', 'acme', '--since', '2026-03-01'], '--since is not an option of credit'],
    [['limits', '--account', 'acme', '--max-sessions', 'many'], 'whole number'],
    [['limits', '--account', 'acme', '--max-sessions=-1'], 'whole number'],
    [['usage', '--account', 'acme', '--since', 'yesterday'], '--since'],
    [['usage', '--account', 'acme', '--bogus'], 'bogus'],
  ])('%j is a usage error (exit 2, one line)', async (argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('npm run keys -- limits', () => {
  it('prints the overrides, sets some, lifts one with 0 and returns one to the default', async () => {
    expect((await run('limits', '--account', 'acme')).stdout.split('\n').filter(Boolean).map((l) => l.split(/\s{2,}/))).toEqual([
      ['max_sessions', 'default'],
      ['session_starts_per_minute', 'default'],
      ['key_exchanges_per_minute', 'default'],
      ['input_text_per_second', 'default'],
    ]);
    const set = await run('limits', '--account', 'acme', '--max-sessions', '3', '--starts-per-minute', '20', '--input-text-per-second', '0');
    expect(set.stdout).toMatch(/^max_sessions\s+3$/m);
    expect(set.stdout).toMatch(/^session_starts_per_minute\s+20$/m);
    expect(set.stdout).toMatch(/^input_text_per_second\s+0 \(none for this account\)$/m);
    const back = await run('limits', '--account', 'acme', '--max-sessions', 'default', '--key-exchanges-per-minute', '6');
    expect(back.stdout).toMatch(/^max_sessions\s+default$/m);
    expect(back.stdout).toMatch(/^session_starts_per_minute\s+20$/m);
    expect(back.stdout).toMatch(/^key_exchanges_per_minute\s+6$/m);
  });
});

describe('npm run keys -- usage', () => {
  it('prints one account’s totals, days and sessions; --since cuts earlier days', async () => {
    await seed();
    const r = await run('usage', '--account', 'acme');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('usage of acme: 2 sessions, 35.5 s, 35.5 units');
    expect(r.stdout).toMatch(/^2026-03-01\s+30\s+0\s+0\s+0\s+0\s+12\s+0\s+0\s+0\s+30$/m);
    expect(r.stdout).toMatch(/^call-2\s+2026-03-02 10:00:00\s+1\s+5\.5\s+2\.25\s/m);
    expect(r.stdout).not.toContain('call-9');
    const since = await run('usage', '--account', 'acme', '--since', '2026-03-02');
    expect(since.stdout).not.toMatch(/^2026-03-01/m);
    expect(since.stdout.split('\n')[0]).toBe('usage of acme since 2026-03-02T00:00:00.000Z: 1 sessions, 5.5 s, 5.5 units');
  });

  it('--json through the real entry point (parley keys, which npm run keys runs)', async () => {
    await seed();
    const child = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'), join(REPO_ROOT, 'signaling/cli/parley.ts'), 'keys', 'usage', '--account', 'acme', '--json'], {
      env: { ...process.env, DATA_DIR: dir },
      encoding: 'utf8',
    });
    expect(child.status).toBe(0);
    const report = JSON.parse(child.stdout);
    expect(report).toMatchObject({ account: 'acme', since: null, truncated: false, totals: { session_s: 35.5, audio_in_s: 2.25, llm_output_tokens: 12, units: 35.5 } });
    expect(report.sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['call-2', 'call-1']);
    expect(report.days.map((d: { day: string }) => d.day)).toEqual(['2026-03-01', '2026-03-02']);
  });
});

describe.skipIf(!postgresAvailable())('usage, credit and limits on PostgreSQL (DATABASE_URL)', () => {
  let pgServer: TestPostgres;
  beforeAll(async () => {
    pgServer = await startPostgres();
  });
  afterAll(() => pgServer.close());

  it('the same commands against the deployment database; a server store on it sees each change', async () => {
    const DATABASE_URL = await pgServer.createDatabase();
    const cli = async (...argv: string[]) => {
      let stdout = '';
      const code = await runCli(argv, { DATA_DIR: dir, DATABASE_URL }, { stdout: (s) => (stdout += s), stderr: () => undefined });
      return { code, stdout };
    };
    const store = await openUsageStore({ DATA_DIR: dir, DATABASE_URL });
    try {
      await store.ledger.record([{ id: 'u:pg', account: 'acme', sessionId: 'call-1', turnId: 't1', at: '2026-03-01T10:00:00.000Z', usage: { ...ZERO, session_s: 30 }, units: 30 }]);
      expect(await cli('credit', '--account', 'acme', '--set', '100')).toEqual({ code: 0, stdout: 'acme: 100 units\n' });
      expect(await store.book.credit('acme')).toBe(100);
      expect((await cli('limits', '--account', 'acme', '--max-sessions', '3')).code).toBe(0);
      expect((await store.book.limits('acme')).max_sessions).toBe(3);
      const usage = await cli('usage', '--account', 'acme', '--json');
      expect(JSON.parse(usage.stdout)).toMatchObject({ account: 'acme', totals: { session_s: 30, units: 30 }, sessions: [{ session_id: 'call-1', turns: 1 }] });
    } finally {
      await store.close();
    }
  }, 60_000);
});
