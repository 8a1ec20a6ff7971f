import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisConnection } from '../stores/redis/redis-connection.ts';
import { RedisLiveSessions } from '../stores/redis/redis-live-sessions.ts';
import { migrationsFor } from '../stores/sql/migrations.ts';
import { openSqlDatabase } from '../stores/sql/sql-database.ts';
import { redisAvailable, startRedis, type TestRedis } from '../testing/redis-server.ts';
import { freePort } from '../testing/server-process.ts';
import { runCli } from './program.ts';

/** `parley migrate` and `parley sessions` through the program, as the bin runs them. */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parley-operator-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(env: Record<string, string>, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { env, stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

describe('parley migrate', () => {
  it('migrates SQLite in --data-dir (over DATA_DIR) once, then says the schema is up to date', async () => {
    const other = join(dir, 'elsewhere');
    const names = Object.keys(migrationsFor('sqlite'));
    const first = await run({ DATA_DIR: join(dir, 'unused') }, 'migrate', '--data-dir', other);
    expect(first).toEqual({ code: 0, stdout: `migrate: SQLite in ${other}: applied ${names.join(', ')}\n`, stderr: '' });
    expect(await run({ DATA_DIR: other }, 'migrate')).toEqual({ code: 0, stdout: `migrate: SQLite in ${other}: schema is up to date\n`, stderr: '' });
    const database = openSqlDatabase({ DATA_DIR: other });
    try {
      expect(await database.migrate()).toEqual([]);
    } finally {
      await database.close();
    }
  });

  it('an unreachable PostgreSQL is exit 1 with one line; a bad DATABASE_URL is exit 2 naming it', async () => {
    const down = await run({ DATA_DIR: dir, DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nothing` }, 'migrate');
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^parley: error: .+\n$/);
    const bad = await run({ DATA_DIR: dir, DATABASE_URL: 'mysql://x' }, 'migrate');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^parley: invalid configuration:\n {2}DATABASE_URL: /);
  });
});

describe.skipIf(!redisAvailable())('parley sessions on a real Redis', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis.close());

  it('lists the sessions every process registered, one account when asked, as a table or JSON', async () => {
    const prefix = redis.prefix();
    const connection = new RedisConnection(redis.url, prefix, { warn: () => undefined, info: () => undefined });
    const registry = new RedisLiveSessions(connection, 'host:1:ab', 60_000);
    try {
      await connection.waitReady(3000);
      const base = { instance: 'host:1:ab', modality: 'text', transport: 'websocket' } as const;
      await registry.acquire({ ...base, id: 'host:1:ab/1', sessionId: 's-one', account: 'acme', startedAt: '2026-01-01T00:00:00.000Z' }, 0);
      await registry.acquire({ ...base, id: 'host:1:ab/2', sessionId: 's-two', account: 'beta', startedAt: '2026-01-01T00:00:01.000Z', modality: 'voice' }, 0);
      const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix };
      const all = await run(env, 'sessions');
      expect(all.code).toBe(0);
      const rows = all.stdout.trimEnd().split('\n').map((l) => l.split(/\s+/));
      expect(rows).toEqual([
        ['session_id', 'account', 'modality', 'transport', 'process', 'started'],
        ['s-one', 'acme', 'text', 'websocket', 'host:1:ab', '2026-01-01T00:00:00.000Z'],
        ['s-two', 'beta', 'voice', 'websocket', 'host:1:ab', '2026-01-01T00:00:01.000Z'],
        ['2', 'live'],
      ]);
      const json = await run(env, 'sessions', '--account', 'beta', '--json');
      expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ sessionId: 's-two', account: 'beta' })]);
    } finally {
      await registry.close();
      await connection.close();
    }
  });

  it('without REDIS_URL is exit 2 saying why; a Redis that does not answer is exit 1', async () => {
    const none = await run({}, 'sessions');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^parley: REDIS_URL is not set/);
    const down = await run({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, 'sessions');
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^parley: error: Redis at .* does not answer\n$/);
  }, 20_000);
});
