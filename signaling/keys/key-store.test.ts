import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlDatabase } from '../stores/sql/sql-database.ts';
import { SqlKeyStore } from '../stores/sql/sql-key-store.ts';
import { StoreUnavailableError } from '../stores/unavailable.ts';
import { sqlEngines } from '../testing/sql-engines.ts';
import { checkKey } from './credentials.ts';
import type { KeyStore } from './key-store.ts';
import { mintScopedKey } from './scoped-key.ts';

const active = async (s: KeyStore, key: string) => {
  const r = await s.lookup(key);
  return r.status === 'active' ? { id: r.id, account: r.account } : null;
};

/** The KeyStore contract, on SQLite and on a real PostgreSQL: same behaviour, same answers. */
describe.each(sqlEngines())('KeyStore on $name', (engine) => {
  afterAll(() => engine.cleanup());
  const openStore = async () => new SqlKeyStore(await engine.fresh());

  it('creates ck_ keys with key_ ids and finds them', async () => {
    const s = await openStore();
    const k = await s.create('acme');
    expect(k.key).toMatch(/^ck_[A-Za-z0-9_-]{43}$/);
    expect(k.id).toMatch(/^key_[0-9a-f]{12}$/);
    expect(k.account).toBe('acme');
    expect(Number.isNaN(Date.parse(k.createdAt))).toBe(false);
    expect(await s.lookup(k.key)).toEqual({ status: 'active', id: k.id, account: 'acme' });
    expect((await s.create('acme')).key).not.toBe(k.key);
  });

  it('rejects unknown, revoked, and non-ck_ keys', async () => {
    const s = await openStore();
    const k = await s.create('acme');
    for (const other of [`ck_${'A'.repeat(43)}`, k.key.slice(3), `sk_${k.key.slice(3)}`, '', `${k.key}x`]) {
      expect(await s.lookup(other), other).toEqual({ status: 'unknown' });
    }
    expect(await s.revoke(k.id)).toBe('revoked');
    expect(await active(s, k.key)).toBeNull();
    expect(await s.lookup(k.key)).toEqual({ status: 'revoked', id: k.id, account: 'acme' });
  });

  it('revoke distinguishes revoked / already_revoked / unknown and keeps other keys working', async () => {
    const s = await openStore();
    const a = await s.create('acme');
    const b = await s.create('beta');
    expect(await s.revoke(a.id)).toBe('revoked');
    const firstRevokedAt = (await s.list()).find((k) => k.id === a.id)?.revokedAt;
    expect(await s.revoke(a.id)).toBe('already_revoked');
    expect((await s.list()).find((k) => k.id === a.id)?.revokedAt).toBe(firstRevokedAt);
    expect(await s.revoke('key_nope')).toBe('unknown');
    expect(await active(s, b.key)).toEqual({ id: b.id, account: 'beta' });
  });

  it('two revokes racing: exactly one revokes, the first revocation time stays', async () => {
    const s = await openStore();
    const k = await s.create('acme');
    const results = await Promise.all([s.revoke(k.id), s.revoke(k.id), s.revoke(k.id)]);
    expect(results.sort()).toEqual(['already_revoked', 'already_revoked', 'revoked']);
  });

  it('list never exposes the key or its hash', async () => {
    const s = await openStore();
    const k = await s.create('acme');
    await s.revoke(k.id);
    const rows = await s.list();
    expect(rows).toEqual([{ id: k.id, account: 'acme', createdAt: k.createdAt, revokedAt: expect.any(String) }]);
    const json = JSON.stringify(rows);
    expect(json).not.toContain(k.key);
    expect(json).not.toContain(createHash('sha256').update(k.key).digest('hex'));
  });

  it('stores only the SHA-256 of a key, and its account in accounts', async () => {
    const database = await engine.fresh();
    const k = await new SqlKeyStore(database).create('acme');
    const rows = await database.db.selectFrom('keys').selectAll().execute();
    expect(rows).toEqual([{ id: k.id, account: 'acme', hash: createHash('sha256').update(k.key).digest('hex'), created_at: k.createdAt, revoked_at: null }]);
    expect(JSON.stringify(rows)).not.toContain(k.key.slice(3));
    expect(await database.db.selectFrom('accounts').select('name').execute()).toEqual([{ name: 'acme' }]);
  });

  it('validates account names', async () => {
    const s = await openStore();
    for (const bad of ['', 'a b', 'x'.repeat(65), 'acme/1', 'é', 'a\n']) {
      await expect(s.create(bad)).rejects.toThrow(/invalid account name/);
    }
    expect((await s.create('A.b_c-9')).account).toBe('A.b_c-9');
    expect((await s.create('x'.repeat(64))).account).toHaveLength(64);
    expect(await s.list()).toHaveLength(2);
  });

  it('a second instance (another process, the CLI) sees keys created and revoked by the first at once', async () => {
    const settings = await engine.settings();
    const server = openSqlDatabase(settings);
    const cli = openSqlDatabase(settings);
    try {
      await server.migrate();
      const [serverKeys, cliKeys] = [new SqlKeyStore(server), new SqlKeyStore(cli)];
      const k = await cliKeys.create('acme');
      expect(await active(serverKeys, k.key)).toEqual({ id: k.id, account: 'acme' });
      expect((await serverKeys.list()).map((r) => r.id)).toEqual([k.id]);
      expect(await cliKeys.revoke(k.id)).toBe('revoked');
      expect(await active(serverKeys, k.key)).toBeNull();
      expect(await serverKeys.revoke(k.id)).toBe('already_revoked');
    } finally {
      await Promise.all([server.close(), cli.close()]);
    }
  });

  it('a database that cannot answer is StoreUnavailableError, never "unknown"', async () => {
    const database = await engine.fresh();
    const s = new SqlKeyStore(database);
    const k = await s.create('acme');
    await database.close();
    const error = await s.lookup(k.key).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).store).toBe(engine.name);
    await expect(s.create('acme')).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe('KeyStore on sqlite: the file', () => {
  const [sqlite] = sqlEngines();
  afterAll(() => sqlite!.cleanup());

  it('creates DATA_DIR recursively, and the raw key is nowhere in the file bytes', async () => {
    const { DATA_DIR } = await sqlite!.settings();
    const dir = join(DATA_DIR, 'a', 'b');
    const database = openSqlDatabase({ DATA_DIR: dir });
    await database.migrate();
    const k = await new SqlKeyStore(database).create('acme');
    await database.close();
    const bytes = Buffer.concat(readdirSync(dir).filter((f) => f.startsWith('keys.sqlite3')).map((f) => readFileSync(join(dir, f))));
    expect(bytes.includes(createHash('sha256').update(k.key).digest('hex'))).toBe(true); // the right bytes
    expect(bytes.includes(k.key)).toBe(false);
    expect(bytes.includes(k.key.slice(3))).toBe(false);
  });
});

describe('checkKey', () => {
  const [sqlite] = sqlEngines();
  afterAll(() => sqlite!.cleanup());
  const secret = Buffer.alloc(32, 7);

  it('accepts persistent keys and classifies failures', async () => {
    const store = new SqlKeyStore(await sqlite!.fresh());
    const k = await store.create('acme');
    expect(await checkKey(k.key, { store, secret })).toEqual({ ok: true, credential: { kind: 'persistent', account: 'acme', keyId: k.id } });
    expect(await checkKey('', { store, secret })).toEqual({ ok: false, reason: 'missing' });
    expect(await checkKey(undefined, { store, secret })).toEqual({ ok: false, reason: 'missing' });
    expect(await checkKey('Bearer x', { store, secret })).toEqual({ ok: false, reason: 'malformed' });
    expect(await checkKey('ck_short', { store, secret })).toEqual({ ok: false, reason: 'malformed' });
    expect(await checkKey(`ck_${'A'.repeat(43)}`, { store, secret })).toEqual({ ok: false, reason: 'unknown' });
    await store.revoke(k.id);
    expect(await checkKey(k.key, { store, secret })).toEqual({ ok: false, reason: 'revoked' });
  });

  it('accepts scoped keys, which outlive revocation of their parent key until expiry, with no database at all', async () => {
    const database = await sqlite!.fresh();
    const store = new SqlKeyStore(database);
    const k = await store.create('acme');
    const now = 1_700_000_000_000;
    const { apiKey } = mintScopedKey(secret, { account: 'acme', sessionId: 's1', keyId: k.id, ttlS: 60, now });
    await store.revoke(k.id);
    await database.close();
    expect(await checkKey(apiKey, { store, secret, now })).toEqual({
      ok: true,
      credential: { kind: 'scoped', account: 'acme', keyId: k.id, sessionId: 's1', expiresAt: now + 60_000 },
    });
    expect(await checkKey(apiKey, { store, secret, now: now + 60_000 })).toEqual({ ok: false, reason: 'expired' });
    expect(await checkKey(apiKey, { store, secret: Buffer.alloc(32, 8), now })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(await checkKey('sk_nope', { store, secret, now })).toEqual({ ok: false, reason: 'malformed' });
  });
});
