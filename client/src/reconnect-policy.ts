/** The knobs of automatic reconnection (SPEC: base 500 ms, maximum 5000 ms, 12 attempts). */
export interface ReconnectPolicy {
  baseMs: number;
  maxMs: number;
  maxAttempts: number;
}

export const DEFAULT_RECONNECT_POLICY: ReconnectPolicy = { baseMs: 500, maxMs: 5000, maxAttempts: 12 };

/** The policy from the client options, SPEC defaults for what is left out. */
export function reconnectPolicyFrom(o: { reconnectBaseMs?: number; reconnectMaxMs?: number; maxReconnectAttempts?: number }): ReconnectPolicy {
  return {
    baseMs: o.reconnectBaseMs ?? DEFAULT_RECONNECT_POLICY.baseMs,
    maxMs: o.reconnectMaxMs ?? DEFAULT_RECONNECT_POLICY.maxMs,
    maxAttempts: o.maxReconnectAttempts ?? DEFAULT_RECONNECT_POLICY.maxAttempts,
  };
}

/**
 * The delay before reconnect attempt `attempt` (1 for the first), or null when the attempts are
 * used up. Exponential backoff capped at maxMs, with "equal jitter": half of the capped delay is
 * fixed, the other half random, so clients dropped together do not return together and no retry
 * comes sooner than half the backoff.
 */
export function nextReconnectDelay(attempt: number, policy: ReconnectPolicy, random: () => number = Math.random): number | null {
  if (!Number.isFinite(attempt) || attempt < 1 || attempt > policy.maxAttempts) return null;
  const base = Math.max(0, policy.baseMs);
  const capped = Math.min(Math.max(base, policy.maxMs), base * 2 ** (attempt - 1));
  const half = capped / 2;
  return Math.round(half + Math.min(1, Math.max(0, random())) * half);
}
