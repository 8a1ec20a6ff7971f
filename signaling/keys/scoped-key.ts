import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { SessionId } from '../../session/protocol/common.ts';
import { AccountSchema } from './key-store.ts';

export const DEFAULT_SCOPED_KEY_TTL_S = 7800;

const PREFIX = 'sk_';
// Far above any real token; stops us HMACing or decoding arbitrarily large attacker input.
const MAX_TOKEN_LENGTH = 1024;
const B64URL_RE = /^[A-Za-z0-9_-]+$/;

const PayloadSchema = z.object({
  v: z.literal(1),
  a: AccountSchema,
  s: SessionId,
  e: z.number().int().positive(),
  k: z.string().min(1).max(64),
  n: z.string(),
});

export type ScopedClaims = { account: string; sessionId: string; keyId: string; expiresAt: number };
export type ScopedVerifyResult =
  | { ok: true; claims: ScopedClaims }
  | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' };

function sign(secret: Buffer, payload: string): string {
  // The prefix is signed too so a signature can never be replayed under another token type.
  return createHmac('sha256', secret).update(PREFIX + payload, 'utf8').digest('base64url');
}

export function mintScopedKey(
  secret: Buffer,
  opts: { account: string; sessionId: string; keyId: string; ttlS: number; now?: number },
): { apiKey: string; expiresIn: number } {
  const { account, sessionId, keyId, ttlS } = opts;
  if (!Number.isInteger(ttlS) || ttlS <= 0) throw new Error(`ttlS must be a positive integer, got ${ttlS}`);
  // Flooring "now" means a key never outlives its TTL.
  const e = Math.floor((opts.now ?? Date.now()) / 1000) + ttlS;
  const claims = { v: 1, a: account, s: sessionId, e, k: keyId, n: randomBytes(8).toString('base64url') };
  // Refuse to sign what verify would reject, so bad input fails loudly here rather than later.
  const parsed = PayloadSchema.safeParse(claims);
  if (!parsed.success) throw new Error(`cannot mint scoped key: ${parsed.error.issues[0]?.message ?? 'invalid claims'}`);
  const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
  return { apiKey: `${PREFIX}${payload}.${sign(secret, payload)}`, expiresIn: ttlS };
}

export function verifyScopedKey(secret: Buffer, token: string, now?: number): ScopedVerifyResult {
  try {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !token.startsWith(PREFIX)) {
      return { ok: false, reason: 'malformed' };
    }
    const parts = token.slice(PREFIX.length).split('.');
    const [payload, sig] = parts;
    if (parts.length !== 2 || !payload || !sig || !B64URL_RE.test(payload) || !B64URL_RE.test(sig)) {
      return { ok: false, reason: 'malformed' };
    }
    // Compare the canonical encoded strings, not decoded bytes: Node's base64 decoder tolerates
    // non-canonical trailing bits, which would let several strings pass as one signature.
    const expected = Buffer.from(sign(secret, payload), 'utf8');
    const given = Buffer.from(sig, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { ok: false, reason: 'bad_signature' };
    }
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, reason: 'malformed' };
    }
    const parsed = PayloadSchema.safeParse(json);
    if (!parsed.success) return { ok: false, reason: 'malformed' };
    const c = parsed.data;
    const expiresAt = c.e * 1000;
    if ((now ?? Date.now()) >= expiresAt) return { ok: false, reason: 'expired' };
    return { ok: true, claims: { account: c.a, sessionId: c.s, keyId: c.k, expiresAt } };
  } catch {
    // Callers treat this as an auth decision; an unexpected throw must still mean "no".
    return { ok: false, reason: 'malformed' };
  }
}

/**
 * The HMAC secret. A file in dataDir lets every process on one machine agree without config;
 * multi-host deployments MUST set SCOPED_KEY_SECRET (same value everywhere) instead, or keys
 * minted on one host will fail on another.
 */
export function loadOrCreateSecret(dataDir: string, configured?: string): Buffer {
  if (configured !== undefined && configured !== '') {
    if (configured.length < 32) throw new Error('SCOPED_KEY_SECRET must be at least 32 characters');
    return Buffer.from(configured, 'utf8');
  }
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'scoped-key.secret');
  try {
    return readSecretFile(file);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw err;
  }
  // Write fully to a private temp file, then link() it into place: link fails if the name exists,
  // so concurrent first starts converge on one secret and nobody reads a half-written file.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600); // mode above is filtered by umask; be explicit
  try {
    linkSync(tmp, file);
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
  } finally {
    unlinkSync(tmp);
  }
  return readSecretFile(file);
}

function readSecretFile(file: string): Buffer {
  const hex = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64,}$/i.test(hex) || hex.length % 2 !== 0) {
    throw new Error(`${file} is corrupt: expected at least 64 hex characters (delete it to regenerate; this invalidates issued scoped keys)`);
  }
  return Buffer.from(hex, 'hex');
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === code;
}
