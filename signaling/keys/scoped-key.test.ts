import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SCOPED_KEY_TTL_S, loadOrCreateSecret, mintScopedKey, verifyScopedKey } from './scoped-key.ts';

const secret = randomBytes(32);
const NOW = 1_700_000_000_000; // whole second, so expiry is exactly NOW + ttl
const base = { account: 'acme', sessionId: 'sess_1', keyId: 'key_0123456789ab', ttlS: 7800 };

function b64(json: unknown): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

describe('scoped keys', () => {
  it('round trips claims', () => {
    const { apiKey, expiresIn } = mintScopedKey(secret, { ...base, now: NOW });
    expect(expiresIn).toBe(7800);
    expect(DEFAULT_SCOPED_KEY_TTL_S).toBe(7800);
    expect(apiKey).toMatch(/^sk_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyScopedKey(secret, apiKey, NOW)).toEqual({
      ok: true,
      claims: { account: 'acme', sessionId: 'sess_1', keyId: 'key_0123456789ab', expiresAt: NOW + 7800_000 },
    });
    const payload = JSON.parse(Buffer.from(apiKey.slice(3).split('.')[0] ?? '', 'base64url').toString());
    expect(payload).toMatchObject({ v: 1, a: 'acme', s: 'sess_1', e: NOW / 1000 + 7800, k: 'key_0123456789ab' });
    expect(Buffer.from(payload.n, 'base64url')).toHaveLength(8);
  });

  it('mints distinct tokens for identical inputs (nonce)', () => {
    expect(mintScopedKey(secret, { ...base, now: NOW }).apiKey).not.toBe(mintScopedKey(secret, { ...base, now: NOW }).apiKey);
  });

  it('expires exactly at expiry, using injected now', () => {
    const { apiKey } = mintScopedKey(secret, { ...base, ttlS: 10, now: NOW });
    expect(verifyScopedKey(secret, apiKey, NOW + 9_999).ok).toBe(true);
    expect(verifyScopedKey(secret, apiKey, NOW + 10_000)).toEqual({ ok: false, reason: 'expired' });
    expect(verifyScopedKey(secret, apiKey, NOW + 10_001)).toEqual({ ok: false, reason: 'expired' });
  });

  it('never outlives the TTL when minted mid-second', () => {
    const { apiKey } = mintScopedKey(secret, { ...base, ttlS: 10, now: NOW + 999 });
    expect(verifyScopedKey(secret, apiKey, NOW + 999 + 10_000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('rejects a wrong secret', () => {
    const { apiKey } = mintScopedKey(secret, { ...base, now: NOW });
    expect(verifyScopedKey(randomBytes(32), apiKey, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('rejects tampered payloads and signatures', () => {
    const { apiKey } = mintScopedKey(secret, { ...base, now: NOW });
    const [payload = '', sig = ''] = apiKey.slice(3).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = [
      { ...claims, s: 'other_session' },
      { ...claims, a: 'evil' },
      { ...claims, e: claims.e + 3600 },
    ];
    for (const c of forged) {
      expect(verifyScopedKey(secret, `sk_${b64(c)}.${sig}`, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
    }
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    expect(verifyScopedKey(secret, `sk_${payload}.${flip(sig, 0)}`, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
    // 43 base64url chars carry 2 unused bits: a non-canonical spelling decodes to the same bytes
    // but must still be rejected, so tokens are not malleable.
    const ALPHA = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const alias = sig.slice(0, 42) + ALPHA[ALPHA.indexOf(sig[42] ?? '') | 1];
    expect(alias).not.toBe(sig);
    expect(Buffer.from(alias, 'base64url').equals(Buffer.from(sig, 'base64url'))).toBe(true);
    expect(verifyScopedKey(secret, `sk_${payload}.${alias}`, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyScopedKey(secret, `sk_${payload}.${sig.slice(0, -1)}`, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verifyScopedKey(secret, `sk_${flip(payload, 5)}.${sig}`, NOW)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('validates the payload after the signature', () => {
    // Sign arbitrary JSON the same way mint does, to reach the schema check.
    const signed = (claims: unknown): string => {
      const p = b64(claims);
      return `sk_${p}.${createHmac('sha256', secret).update(`sk_${p}`).digest('base64url')}`;
    };
    const ok = { v: 1, a: 'acme', s: 's', e: NOW / 1000 + 10, k: 'key_x', n: 'AAAAAAAAAAA' };
    expect(verifyScopedKey(secret, signed(ok), NOW).ok).toBe(true);
    for (const bad of [
      { ...ok, v: 2 },
      { ...ok, s: '.starts-with-dot' },
      { ...ok, s: 'x'.repeat(65) },
      { ...ok, a: 'a b' },
      { ...ok, e: '123' },
      { ...ok, k: '' },
      [],
      null,
      'str',
    ]) {
      expect(verifyScopedKey(secret, signed(bad), NOW)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('never throws on malformed input', () => {
    const { apiKey } = mintScopedKey(secret, { ...base, now: NOW });
    const inputs: unknown[] = [
      '', 'sk_', 'sk_.', 'sk_a.', 'sk_.b', 'sk_a.b.c', 'sk_a..b', 'ck_abc', 'SK_a.b', 'sk_!!!.@@@',
      'sk_a b.c', 'sk_\u0000.\u0000', `sk_${'A'.repeat(5000)}.${'B'.repeat(43)}`, apiKey.slice(0, -44),
      `${apiKey}.`, `${apiKey} `, ` ${apiKey}`, apiKey.replace('.', ''), `sk_${b64('x')}`, 'sk_%%.%%',
      'sk_😀.😀', undefined, null, 42, {}, [],
    ];
    for (const input of inputs) {
      const r = verifyScopedKey(secret, input as string, NOW);
      expect(r.ok).toBe(false);
    }
    expect(verifyScopedKey(secret, 'sk_a.b.c', NOW)).toEqual({ ok: false, reason: 'malformed' });
    expect(verifyScopedKey(secret, 'sk_abc.def', NOW)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses to mint invalid claims', () => {
    expect(() => mintScopedKey(secret, { ...base, sessionId: '.bad' })).toThrow(/cannot mint/);
    expect(() => mintScopedKey(secret, { ...base, sessionId: '' })).toThrow(/cannot mint/);
    expect(() => mintScopedKey(secret, { ...base, account: 'a b' })).toThrow(/cannot mint/);
    expect(() => mintScopedKey(secret, { ...base, ttlS: 0 })).toThrow(/ttlS/);
    expect(() => mintScopedKey(secret, { ...base, ttlS: 1.5 })).toThrow(/ttlS/);
  });
});

describe('loadOrCreateSecret', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-secret-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a 0600 secret file once and reuses it', () => {
    const dataDir = join(dir, 'nested');
    const a = loadOrCreateSecret(dataDir);
    const file = join(dataDir, 'scoped-key.secret');
    expect(a).toHaveLength(32);
    expect(readFileSync(file, 'utf8').trim()).toBe(a.toString('hex'));
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    const b = loadOrCreateSecret(dataDir);
    expect(b.equals(a)).toBe(true);
    // Tokens minted by one process verify in another that loaded the same file.
    const { apiKey } = mintScopedKey(a, { ...base, now: NOW });
    expect(verifyScopedKey(b, apiKey, NOW).ok).toBe(true);
  });

  it('prefers a configured secret and requires 32+ chars', () => {
    const configured = 'x'.repeat(32);
    expect(loadOrCreateSecret(dir, configured).equals(Buffer.from(configured))).toBe(true);
    expect(() => loadOrCreateSecret(dir, 'short')).toThrow(/at least 32/);
    expect(loadOrCreateSecret(dir, '')).toHaveLength(32); // empty env var means "not set"
  });

  it('refuses a corrupt secret file rather than silently replacing it', () => {
    writeFileSync(join(dir, 'scoped-key.secret'), 'nothex\n');
    expect(() => loadOrCreateSecret(dir)).toThrow(/corrupt/);
  });
});
