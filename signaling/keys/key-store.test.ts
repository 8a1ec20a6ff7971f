import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyStore } from './key-store.ts';
import { checkKey } from './credentials.ts';
import { mintScopedKey } from './scoped-key.ts';

let dir: string;
const open: KeyStore[] = [];
function openStore(d = dir): KeyStore {
  const s = KeyStore.open(d);
  open.push(s);
  return s;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'parley-keys-'));
});
afterEach(() => {
  for (const s of open.splice(0)) {
    try { s.close(); } catch { /* already closed by the test */ }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('KeyStore', () => {
  it('creates ck_ keys with key_ ids and verifies them', () => {
    const s = openStore();
    const k = s.create('acme');
    expect(k.key).toMatch(/^ck_[A-Za-z0-9_-]{43}$/);
    expect(k.id).toMatch(/^key_[0-9a-f]{12}$/);
    expect(k.account).toBe('acme');
    expect(Number.isNaN(Date.parse(k.createdAt))).toBe(false);
    expect(s.verify(k.key)).toEqual({ id: k.id, account: 'acme' });
    expect(s.create('acme').key).not.toBe(k.key);
  });

  it('creates dataDir recursively', () => {
    const s = openStore(join(dir, 'a', 'b'));
    expect(s.verify(s.create('acme').key)).not.toBeNull();
  });

  it('stores only the sha256 hash: the raw key is not in the sqlite file bytes', () => {
    const s = openStore();
    const k = s.create('acme');
    s.close();
    const bytes = Buffer.concat(
      readdirSync(dir).filter((f) => f.startsWith('keys.sqlite3')).map((f) => readFileSync(join(dir, f))),
    );
    const hash = createHash('sha256').update(k.key).digest('hex');
    expect(bytes.includes(hash)).toBe(true); // proves we read the right bytes
    expect(bytes.includes(k.key)).toBe(false);
    expect(bytes.includes(k.key.slice(3))).toBe(false);
  });

  it('rejects unknown, revoked, and non-ck_ keys', () => {
    const s = openStore();
    const k = s.create('acme');
    expect(s.verify(`ck_${'A'.repeat(43)}`)).toBeNull();
    expect(s.verify(k.key.slice(3))).toBeNull();
    expect(s.verify(`sk_${k.key.slice(3)}`)).toBeNull();
    expect(s.verify('')).toBeNull();
    expect(s.verify(`${k.key}x`)).toBeNull();
    expect(s.revoke(k.id)).toBe('revoked');
    expect(s.verify(k.key)).toBeNull();
    expect(s.lookup(k.key)).toEqual({ status: 'revoked', id: k.id, account: 'acme' });
  });

  it('revoke distinguishes revoked / already_revoked / unknown and keeps other keys working', () => {
    const s = openStore();
    const a = s.create('acme');
    const b = s.create('beta');
    expect(s.revoke(a.id)).toBe('revoked');
    const firstRevokedAt = s.list().find((k) => k.id === a.id)?.revokedAt;
    expect(s.revoke(a.id)).toBe('already_revoked');
    expect(s.list().find((k) => k.id === a.id)?.revokedAt).toBe(firstRevokedAt);
    expect(s.revoke('key_nope')).toBe('unknown');
    expect(s.verify(b.key)).toEqual({ id: b.id, account: 'beta' });
  });

  it('list never exposes the key or hash', () => {
    const s = openStore();
    const k = s.create('acme');
    s.revoke(k.id);
    const rows = s.list();
    expect(rows).toEqual([{ id: k.id, account: 'acme', createdAt: k.createdAt, revokedAt: expect.any(String) }]);
    const json = JSON.stringify(rows);
    expect(json).not.toContain(k.key);
    expect(json).not.toContain(createHash('sha256').update(k.key).digest('hex'));
  });

  it('validates account names', () => {
    const s = openStore();
    for (const bad of ['', 'a b', 'x'.repeat(65), 'acme/1', 'é', 'a\n']) {
      expect(() => s.create(bad)).toThrow(/invalid account name/);
    }
    expect(s.create('A.b_c-9').account).toBe('A.b_c-9');
    expect(s.create('x'.repeat(64)).account).toHaveLength(64);
    expect(s.list()).toHaveLength(2);
  });

  it('a second instance sees keys created and revoked by the first without reopening', () => {
    const server = openStore();
    const cli = openStore();
    const k = cli.create('acme');
    expect(server.verify(k.key)).toEqual({ id: k.id, account: 'acme' });
    expect(server.list().map((r) => r.id)).toEqual([k.id]);
    expect(cli.revoke(k.id)).toBe('revoked');
    expect(server.verify(k.key)).toBeNull();
    expect(server.revoke(k.id)).toBe('already_revoked');
  });
});

describe('checkKey', () => {
  const secret = Buffer.alloc(32, 7);

  it('accepts persistent keys and classifies failures', () => {
    const store = openStore();
    const k = store.create('acme');
    expect(checkKey(k.key, { store, secret })).toEqual({
      ok: true,
      credential: { kind: 'persistent', account: 'acme', keyId: k.id },
    });
    expect(checkKey('', { store, secret })).toEqual({ ok: false, reason: 'missing' });
    expect(checkKey(undefined, { store, secret })).toEqual({ ok: false, reason: 'missing' });
    expect(checkKey('Bearer x', { store, secret })).toEqual({ ok: false, reason: 'malformed' });
    expect(checkKey('ck_short', { store, secret })).toEqual({ ok: false, reason: 'malformed' });
    expect(checkKey(`ck_${'A'.repeat(43)}`, { store, secret })).toEqual({ ok: false, reason: 'unknown' });
    store.revoke(k.id);
    expect(checkKey(k.key, { store, secret })).toEqual({ ok: false, reason: 'revoked' });
  });

  it('accepts scoped keys, which outlive revocation of their parent key until expiry', () => {
    const store = openStore();
    const k = store.create('acme');
    const now = 1_700_000_000_000;
    const { apiKey } = mintScopedKey(secret, { account: 'acme', sessionId: 's1', keyId: k.id, ttlS: 60, now });
    store.revoke(k.id);
    expect(checkKey(apiKey, { store, secret, now })).toEqual({
      ok: true,
      credential: { kind: 'scoped', account: 'acme', keyId: k.id, sessionId: 's1', expiresAt: now + 60_000 },
    });
    expect(checkKey(apiKey, { store, secret, now: now + 60_000 })).toEqual({ ok: false, reason: 'expired' });
    expect(checkKey(apiKey, { store, secret: Buffer.alloc(32, 8), now })).toEqual({ ok: false, reason: 'bad_signature' });
    expect(checkKey('sk_nope', { store, secret, now })).toEqual({ ok: false, reason: 'malformed' });
  });
});
