import { describe, expect, it } from 'vitest';
import { GcPauses } from './gc-pauses.ts';

describe('GcPauses', () => {
  it('counts this thread’s collections and forgets them on reset', async () => {
    const gc = new GcPauses();
    let keep: unknown[] = [];
    // Enough short-lived garbage for several scavenges.
    for (let i = 0; i < 400_000; i += 1) {
      keep.push({ i, s: `x${i}` });
      if (keep.length > 1000) keep = [];
    }
    await new Promise((r) => setTimeout(r, 50)); // observer callbacks are delivered asynchronously
    const seen = gc.summary();
    expect(seen.count).toBeGreaterThan(0);
    expect(seen.maxMs).toBeGreaterThan(0);
    expect(seen.totalMs).toBeGreaterThanOrEqual(0);
    gc.reset();
    expect(gc.summary()).toEqual({ count: 0, totalMs: 0, maxMs: 0 });
  });
});
