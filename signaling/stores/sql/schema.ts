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
  usage_ledger: {
    /** The interval's id (`<meter run>:<n>`): a retried write finds it and skips. */
    id: string;
    account: string;
    session_id: string;
    /** The turn whose done closed the interval; null for the session's last interval. */
    turn_id: string | null;
    /** When the interval closed. */
    at: string;
    /** UTC day of `at` (YYYY-MM-DD), for totals per day. */
    day: string;
    session_s: number;
    audio_in_s: number;
    audio_out_s: number;
    audio_heard_s: number;
    asr_s: number;
    llm_input_tokens: number;
    llm_output_tokens: number;
    think_input_tokens: number;
    think_output_tokens: number;
    tts_chars: number;
    tool_calls: number;
    llm_tokens_estimated: number;
    think_tokens_estimated: number;
    units: number;
  };
  /** Accounts with a credit balance; an account without a row is unlimited. */
  credit: {
    account: string;
    balance: number;
    updated_at: string;
  };
  /** Per-account limit overrides: NULL follows the default, 0 is no limit. */
  account_limits: {
    account: string;
    max_sessions: number | null;
    session_starts_per_minute: number | null;
    key_exchanges_per_minute: number | null;
    input_text_per_second: number | null;
    updated_at: string;
  };
}

export type Engine = 'sqlite' | 'postgres';
