import type { AccountLimit } from '../../session/protocol/usage.ts';
import type { AccountLimits, LimitVerdict } from './account-limits.ts';

export interface GateOutcome {
  pass(): void;
  refuse(detail: string, retryAfterMs: number, limit: AccountLimit): void;
}

/**
 * INPUT_TEXT_PER_SECOND for one frame: passes it or refuses it (rate_limited; the session goes
 * on). Answered at once when the account has no limit; otherwise returns the verdict's promise,
 * which the connection holds later frames behind so none overtakes this one.
 */
export function gateInputText(limits: AccountLimits, account: string, outcome: GateOutcome): Promise<void> | undefined {
  const verdict = limits.inputText(account);
  if (!(verdict instanceof Promise)) return void apply(verdict, outcome);
  return verdict.then(
    (v) => apply(v, outcome),
    // The overrides could not be read: the frame is not refused on a guess.
    () => outcome.pass(),
  );
}

function apply(verdict: LimitVerdict, outcome: GateOutcome): void {
  if (verdict.ok) outcome.pass();
  else outcome.refuse(verdict.detail, verdict.retryAfterMs, verdict.limit);
}
