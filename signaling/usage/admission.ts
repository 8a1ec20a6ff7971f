import type { AccountLimit } from '../../session/protocol/usage.ts';
import type { ServerUsage } from './server-usage.ts';

export type Refusal = { ok: false; code: 'credit_exhausted' | 'rate_limited'; detail: string; retryAfterMs?: number; limit?: AccountLimit };

/** An admitted start, with the account's concurrent-session limit for the live-session registry (0: none). */
export type Admission = { ok: true; maxSessions: number } | Refusal;

export interface AdmissionLog {
  warn(obj: object, msg: string): void;
}

/**
 * The account-level checks of a start, after authentication and before anything is taken (a
 * resume token): credit left, session starts per minute. (Concurrent sessions are counted where
 * the session joins the live-session registry.) A store that cannot answer admits the start
 * (logged): enforcement resumes once it answers, and a session is never refused on a guess.
 */
export async function admitSession(usage: ServerUsage, account: string, log: AdmissionLog): Promise<Admission> {
  try {
    const balance = await usage.credit.balance(account, true);
    if (balance !== null && balance <= 0) {
      return { ok: false, code: 'credit_exhausted', detail: 'the account has no credit left; top it up and start again (a resume token stays valid meanwhile)' };
    }
    const starts = await usage.limits.consume(account, 'session_starts_per_minute');
    if (!starts.ok) return { ok: false, code: 'rate_limited', detail: starts.detail, retryAfterMs: starts.retryAfterMs, limit: starts.limit };
    return { ok: true, maxSessions: await usage.limits.maxSessions(account) };
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error), account }, 'credit and limits unreadable: start admitted');
    return { ok: true, maxSessions: 0 };
  }
}
