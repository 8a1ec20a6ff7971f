import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONNECT_POLICY, nextReconnectDelay } from './reconnect-policy.ts';

describe('nextReconnectDelay', () => {
  const policy = DEFAULT_RECONNECT_POLICY;

  it('doubles from the base up to the maximum, with the jitter bounds', () => {
    const low = (n: number) => nextReconnectDelay(n, policy, () => 0);
    const high = (n: number) => nextReconnectDelay(n, policy, () => 1);
    expect([1, 2, 3, 4, 5, 6, 12].map(high)).toEqual([500, 1000, 2000, 4000, 5000, 5000, 5000]);
    expect([1, 2, 3, 4, 5, 6, 12].map(low)).toEqual([250, 500, 1000, 2000, 2500, 2500, 2500]);
  });

  it('jitters between half and all of the backoff', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i += 1) {
      const delay = nextReconnectDelay(3, policy)!;
      expect(delay).toBeGreaterThanOrEqual(1000);
      expect(delay).toBeLessThanOrEqual(2000);
      seen.add(delay);
    }
    expect(seen.size).toBeGreaterThan(20);
  });

  it('returns null once the attempts are used up, and for nonsense attempts', () => {
    expect(nextReconnectDelay(12, policy, () => 0.5)).not.toBeNull();
    expect(nextReconnectDelay(13, policy)).toBeNull();
    expect(nextReconnectDelay(0, policy)).toBeNull();
    expect(nextReconnectDelay(Number.NaN, policy)).toBeNull();
    expect(nextReconnectDelay(1, { ...policy, maxAttempts: 0 })).toBeNull();
  });

  it('honours custom knobs and a maximum below the base', () => {
    const fast = { baseMs: 20, maxMs: 50, maxAttempts: 3 };
    expect([1, 2, 3, 4].map((n) => nextReconnectDelay(n, fast, () => 1))).toEqual([20, 40, 50, null]);
    expect(nextReconnectDelay(3, { baseMs: 800, maxMs: 100, maxAttempts: 5 }, () => 1)).toBe(800);
  });
});
