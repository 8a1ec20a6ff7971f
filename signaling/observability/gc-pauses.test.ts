import { describe, expect, it } from 'vitest';
import { GcPauses } from './gc-pauses.ts';

describe('GcPauses', () => {
  it('counts this thread’s collections and forgets them on reset', async () => {
    let counted!: () => void;
    const seen = new Promise<void>((resolve) => (counted = resolve));
    const gc = new GcPauses(() => counted());
    let keep: unknown[] = [];
    // Enough short-lived garbage for several scavenges.
    for (let i = 0; i < 400_000; i += 1) {
      keep.push({ i, s: `x${i}` });
      if (keep.length > 1000) keep = [];
    }
    // The observer hears of pauses asynchronously: wait until it has.
    await seen;
    const summary = gc.summary();
    expect(summary.count).toBeGreaterThan(0);
    expect(summary.maxMs).toBeGreaterThan(0);
    expect(summary.totalMs).toBeGreaterThanOrEqual(0);
    gc.reset();
    expect(gc.summary()).toEqual({ count: 0, totalMs: 0, maxMs: 0 });
  });
});
