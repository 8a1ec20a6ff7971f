import type { AccountLimit } from '../../session/protocol/usage.ts';
import type { ServerUsage } from './server-usage.ts';

export type Refusal = { ok: false; code: 'credit_exhausted' | 'rate_limited'; detail: string; retryAfterMs?: number; limit?: AccountLimit };

/** An admitted start holds one of its account's concurrent sessions until release() (safe to call twice). */
export type Admission = { ok: true; release(): void } | Refusal;

export interface AdmissionLog {
  warn(obj: object, msg: string): void;
}

/**
 * The account-level checks of a start, after authentication and before anything is taken (a
 * resume token): credit left, session starts per minute, concurrent sessions. A store that
 * cannot answer admits the start (logged): enforcement resumes once it answers, and a session is
 * never refused on a guess.
 */
export async function admitSession(usage: ServerUsage, account: string, log: AdmissionLog): Promise<Admission> {
  try {
    const balance = await usage.credit.balance(account, true);
    if (balance !== null && balance <= 0) {
      return { ok: false, code: 'credit_exhausted', detail: 'the account has no credit left; top it up and start again (a resume token stays valid meanwhile)' };
    }
    const starts = await usage.limits.consume(account, 'session_starts_per_minute');
    if (!starts.ok) return { ok: false, code: 'rate_limited', detail: starts.detail, retryAfterMs: starts.retryAfterMs, limit: starts.limit };
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error), account }, 'credit and limits unreadable: start admitted');
  }
  let slot;
  try {
    slot = await usage.limits.acquireSession(account);
  } catch (error) {
    log.warn({ err: error instanceof Error ? error.message : String(error), account }, 'session limit unreadable: start admitted');
    return { ok: true, release: () => undefined };
  }
  if (!slot.ok) return { ok: false, code: 'rate_limited', detail: slot.detail, retryAfterMs: slot.retryAfterMs, limit: slot.limit };
  let held = true;
  return {
    ok: true,
    release: () => {
      if (!held) return;
      held = false;
      usage.limits.releaseSession(account);
    },
  };
}
