import type { ColumnType } from 'kysely';

/**
 * The relational tables, the same on SQLite and PostgreSQL (times are ISO-8601 UTC text, which
 * sorts and compares correctly on both). Created and upgraded only by `migrations.ts`.
 */
export interface Tables {
  accounts: {
    name: string;
    created_at: string;
  };
  keys: {
    id: string;
    account: string;
    /** SHA-256 of the key, hex; the key itself is never stored. */
    hash: string;
    created_at: string;
    revoked_at: string | null;
  };
  /** PostgreSQL only: feedback and client-error reports (the embedded mode keeps JSON lines). */
  reports: {
    id: string;
    kind: 'feedback' | 'client_error';
    account: string;
    session_id: string;
    received_at: string;
    /** jsonb: the report's fields as received (never the key); written as JSON text. */
    body: ColumnType<unknown, string, never>;
  };
}

export type Engine = 'sqlite' | 'postgres';
