import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

export const AccountSchema = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'account must be 1-64 characters of A-Z a-z 0-9 . _ -');

/** Thrown for bad user input so callers (the CLI) can report it without a stack trace. */
export class InvalidAccountError extends Error {
  override name = 'InvalidAccountError';
}

export function parseAccount(account: unknown): string {
  const r = AccountSchema.safeParse(account);
  if (!r.success) {
    throw new InvalidAccountError(
      `invalid account name ${JSON.stringify(account)}: must be 1-64 characters of A-Z a-z 0-9 . _ -`,
    );
  }
  return r.data;
}

/** Exactly what newKey() produces; anything else cannot be in the table, so no DB round trip. */
const PERSISTENT_KEY_RE = /^ck_[A-Za-z0-9_-]{43}$/;
export function isPersistentKeyFormat(key: string): boolean {
  return PERSISTENT_KEY_RE.test(key);
}

// Keys are 256 bits from a CSPRNG, so guessing a preimage is infeasible however fast the hash is.
// Slow password hashes (scrypt/bcrypt) only help low-entropy secrets; here they would add latency
// to every check and, being salted, would prevent the indexed lookup-by-hash.
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A fresh key, its id and its hash: what a store writes (the key itself is shown once). */
export function newKey(account: string): CreatedKey & { hash: string } {
  const key = `ck_${randomBytes(32).toString('base64url')}`;
  return { id: `key_${randomBytes(6).toString('hex')}`, account: parseAccount(account), key, hash: hashKey(key), createdAt: new Date().toISOString() };
}

export type CreatedKey = { id: string; account: string; key: string; createdAt: string };
export type KeyInfo = { id: string; account: string; createdAt: string; revokedAt: string | null };
export type RevokeResult = 'revoked' | 'unknown' | 'already_revoked';
export type KeyLookup =
  | { status: 'active' | 'revoked'; id: string; account: string }
  | { status: 'unknown' };

/**
 * Persistent keys (stored hashed) and their accounts. Every read goes to the database, so a key
 * created or revoked by another process (the CLI, another server) applies at the next check.
 * Implemented once over SQL for SQLite and PostgreSQL (signaling/stores/sql/sql-key-store.ts);
 * a database that cannot answer rejects with StoreUnavailableError.
 */
export interface KeyStore {
  create(account: string): Promise<CreatedKey>;
  list(): Promise<KeyInfo[]>;
  revoke(id: string): Promise<RevokeResult>;
  lookup(key: string): Promise<KeyLookup>;
}
