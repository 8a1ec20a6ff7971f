import { hashKey, isPersistentKeyFormat, newKey, type CreatedKey, type KeyInfo, type KeyLookup, type KeyStore, type RevokeResult } from '../../keys/key-store.ts';
import type { SqlDatabase } from './sql-database.ts';

/** The KeyStore on SQL: one implementation for SQLite and PostgreSQL (same schema, same queries). */
export class SqlKeyStore implements KeyStore {
  private readonly db;
  private readonly health;

  constructor(database: SqlDatabase) {
    this.db = database.db;
    this.health = database.health;
  }

  async create(account: string): Promise<CreatedKey> {
    const { hash, ...created } = newKey(account);
    await this.health.run(() =>
      this.db.transaction().execute(async (trx) => {
        await trx.insertInto('accounts').values({ name: created.account, created_at: created.createdAt }).onConflict((oc) => oc.column('name').doNothing()).execute();
        await trx.insertInto('keys').values({ id: created.id, account: created.account, hash, created_at: created.createdAt, revoked_at: null }).execute();
      }),
    );
    return created;
  }

  async list(): Promise<KeyInfo[]> {
    const rows = await this.health.run(() => this.db.selectFrom('keys').select(['id', 'account', 'created_at', 'revoked_at']).orderBy('created_at').orderBy('id').execute());
    return rows.map((r) => ({ id: r.id, account: r.account, createdAt: r.created_at, revokedAt: r.revoked_at }));
  }

  async revoke(id: string): Promise<RevokeResult> {
    return this.health.run(async () => {
      // The conditional UPDATE keeps the first revocation time if two revokes race.
      const updated = await this.db.updateTable('keys').set({ revoked_at: new Date().toISOString() }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 1) return 'revoked';
      const found = await this.db.selectFrom('keys').select('id').where('id', '=', id).executeTakeFirst();
      return found ? 'already_revoked' : 'unknown';
    });
  }

  async lookup(key: string): Promise<KeyLookup> {
    if (typeof key !== 'string' || !isPersistentKeyFormat(key)) return { status: 'unknown' };
    const row = await this.health.run(() => this.db.selectFrom('keys').select(['id', 'account', 'revoked_at']).where('hash', '=', hashKey(key)).executeTakeFirst());
    if (!row) return { status: 'unknown' };
    return { status: row.revoked_at === null ? 'active' : 'revoked', id: row.id, account: row.account };
  }
}
