import type { AccountLimit, Meters } from '../../session/protocol/usage.ts';
import type { UsageEntry } from '../../session/usage/usage-meter.ts';

/** A session's usage interval with whose it is. */
export interface LedgerEntry extends UsageEntry {
  account: string;
  sessionId: string;
}

/** Sums of the meters, priced, with whether any token meter in them was estimated. */
export type MeterTotals = Meters & { units: number; llm_tokens_estimated: boolean; think_tokens_estimated: boolean };

export interface UsageQuery {
  account: string;
  /** Inclusive lower bound (ISO 8601); undefined: from the first entry. */
  from?: string;
  /** Exclusive upper bound (ISO 8601); undefined: up to now. */
  to?: string;
  sessionId?: string;
  /** Most sessions listed (the newest first). */
  sessionLimit: number;
}

export interface UsageReport {
  totals: MeterTotals;
  /** One row per session id, the most recently active first. */
  sessions: Array<MeterTotals & { session_id: string; first_at: string; last_at: string; turns: number }>;
  /** One row per UTC day, oldest first. */
  days: Array<MeterTotals & { day: string }>;
  /** More sessions matched than sessionLimit. */
  truncated: boolean;
}

/**
 * The usage ledger: every interval of every session, written at each turn end (so a crash loses
 * at most the turn in progress) and summed per session and per account per day.
 */
export interface UsageLedger {
  /**
   * Writes new entries and takes their units off their accounts' credit, in one transaction.
   * Idempotent: an entry already written (a retry) is skipped.
   */
  record(entries: readonly LedgerEntry[]): Promise<void>;
  /** Rewrites an entry already written (a playback report), adjusting the credit by the difference. */
  revise(entry: LedgerEntry): Promise<void>;
  report(query: UsageQuery): Promise<UsageReport>;
}

/** Per-account overrides of a limit: a number ≥ 1, 0 for none on this account, null to follow the default. */
export type LimitOverrides = Record<AccountLimit, number | null>;

/** Accounts' credit balances and limit overrides (set by the operator's CLI, read by every process). */
export interface AccountBook {
  /** Units left, or null when the account has no balance (unlimited). */
  credit(account: string): Promise<number | null>;
  /** Sets the balance; null removes it (unlimited again). */
  setCredit(account: string, units: number | null): Promise<void>;
  /** Adds (or with a negative amount takes) units; an account without a balance starts from 0. Returns the new balance. */
  addCredit(account: string, units: number): Promise<number>;
  limits(account: string): Promise<LimitOverrides>;
  /** Sets the overrides given (others unchanged); returns them all. */
  setLimits(account: string, overrides: Partial<LimitOverrides>): Promise<LimitOverrides>;
}
