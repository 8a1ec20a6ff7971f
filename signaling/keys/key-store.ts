import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
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

/** Exactly what create() produces; anything else cannot be in the table, so no DB round trip. */
const PERSISTENT_KEY_RE = /^ck_[A-Za-z0-9_-]{43}$/;
export function isPersistentKeyFormat(key: string): boolean {
  return PERSISTENT_KEY_RE.test(key);
}

// Keys are 256 bits from a CSPRNG, so guessing a preimage is infeasible however fast the hash is.
// Slow password hashes (scrypt/bcrypt) only help low-entropy secrets; here they would add latency
// to every check and, being salted, would prevent the indexed lookup-by-hash below.
function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export type CreatedKey = { id: string; account: string; key: string; createdAt: string };
export type KeyInfo = { id: string; account: string; createdAt: string; revokedAt: string | null };
export type RevokeResult = 'revoked' | 'unknown' | 'already_revoked';
export type KeyLookup =
  | { status: 'active' | 'revoked'; id: string; account: string }
  | { status: 'unknown' };

type Row = { id: string; account: string; created_at: string; revoked_at: string | null };

export class KeyStore {
  private readonly stmts;

  private constructor(private readonly db: Database.Database) {
    this.stmts = {
      insert: db.prepare<[string, string, string, string]>(
        'INSERT INTO keys (id, account, hash, created_at) VALUES (?, ?, ?, ?)',
      ),
      list: db.prepare<[], Row>(
        'SELECT id, account, created_at, revoked_at FROM keys ORDER BY created_at, id',
      ),
      revoke: db.prepare<[string, string]>(
        'UPDATE keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
      ),
      exists: db.prepare<[string], { id: string }>('SELECT id FROM keys WHERE id = ?'),
      byHash: db.prepare<[string], Row>(
        'SELECT id, account, created_at, revoked_at FROM keys WHERE hash = ?',
      ),
    };
  }

  static open(dataDir: string): KeyStore {
    mkdirSync(dataDir, { recursive: true });
    const db = new Database(join(dataDir, 'keys.sqlite3'));
    try {
      // WAL lets the server read while the CLI writes; busy_timeout rides out the brief write locks.
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
      db.exec(`CREATE TABLE IF NOT EXISTS keys (
        id TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        hash TEXT UNIQUE NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT NULL
      )`);
      return new KeyStore(db);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  create(account: string): CreatedKey {
    const acct = parseAccount(account);
    const id = `key_${randomBytes(6).toString('hex')}`;
    const key = `ck_${randomBytes(32).toString('base64url')}`;
    const createdAt = new Date().toISOString();
    this.stmts.insert.run(id, acct, hashKey(key), createdAt);
    return { id, account: acct, key, createdAt };
  }

  list(): KeyInfo[] {
    return this.stmts.list.all().map((r) => ({
      id: r.id,
      account: r.account,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
    }));
  }

  revoke(id: string): RevokeResult {
    // The conditional UPDATE keeps the first revocation time if two revokes race.
    if (this.stmts.revoke.run(new Date().toISOString(), id).changes === 1) return 'revoked';
    return this.stmts.exists.get(id) ? 'already_revoked' : 'unknown';
  }

  /** Reads the DB on every call so keys created/revoked by another process apply immediately. */
  lookup(key: string): KeyLookup {
    if (typeof key !== 'string' || !isPersistentKeyFormat(key)) return { status: 'unknown' };
    const row = this.stmts.byHash.get(hashKey(key));
    if (!row) return { status: 'unknown' };
    return { status: row.revoked_at === null ? 'active' : 'revoked', id: row.id, account: row.account };
  }

  verify(key: string): { id: string; account: string } | null {
    const r = this.lookup(key);
    return r.status === 'active' ? { id: r.id, account: r.account } : null;
  }

  close(): void {
    this.db.close();
  }
}
