import { describe, expect, it } from 'vitest';
import { LatenessHistogram } from './lateness-histogram.ts';

describe('LatenessHistogram', () => {
  it('reports count, percentiles as bucket upper bounds, and the exact max', () => {
    const h = new LatenessHistogram();
    for (let i = 0; i < 98; i += 1) h.record(0.1);
    h.record(7.3);
    h.record(42.01);
    expect(h.summary()).toEqual({ count: 100, p50: 0.25, p99: 7.5, max: 42.01 });
    h.record(-3); // early counts as on time
    expect(h.summary().count).toBe(101);
    h.reset();
    expect(h.summary()).toEqual({ count: 0, p50: 0, p99: 0, max: 0 });
  });

  it('keeps very late frames in the last bucket without losing the max', () => {
    const h = new LatenessHistogram();
    h.record(250);
    expect(h.summary()).toEqual({ count: 1, p50: 250, p99: 250, max: 250 });
  });
});
