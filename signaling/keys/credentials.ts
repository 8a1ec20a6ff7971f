import type { KeyStore } from './key-store.ts';
import { isPersistentKeyFormat } from './key-store.ts';
import { verifyScopedKey } from './scoped-key.ts';

/**
 * Who is calling. Only `persistent` credentials may mint scoped keys; callers must check `kind`.
 * A scoped credential stays valid until expiresAt even if its parent key (keyId) is revoked.
 */
export type Credential =
  | { kind: 'persistent'; account: string; keyId: string }
  | { kind: 'scoped'; account: string; keyId: string; sessionId: string; expiresAt: number };

export type CheckKeyFailure = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired' | 'bad_signature';
export type CheckKeyResult = { ok: true; credential: Credential } | { ok: false; reason: CheckKeyFailure };

/** Rejects with StoreUnavailableError when a persistent key cannot be checked (database down). */
export async function checkKey(
  key: string | null | undefined,
  deps: { store: KeyStore; secret: Buffer; now?: number },
): Promise<CheckKeyResult> {
  if (typeof key !== 'string' || key === '') return { ok: false, reason: 'missing' };
  if (key.startsWith('ck_')) {
    if (!isPersistentKeyFormat(key)) return { ok: false, reason: 'malformed' };
    const r = await deps.store.lookup(key);
    if (r.status !== 'active') return { ok: false, reason: r.status };
    return { ok: true, credential: { kind: 'persistent', account: r.account, keyId: r.id } };
  }
  if (key.startsWith('sk_')) {
    const r = verifyScopedKey(deps.secret, key, deps.now);
    if (!r.ok) return r;
    return { ok: true, credential: { kind: 'scoped', ...r.claims } };
  }
  return { ok: false, reason: 'malformed' };
}
