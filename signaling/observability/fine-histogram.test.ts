import { describe, expect, it } from 'vitest';
import { FineHistogram, summarize } from './fine-histogram.ts';

describe('FineHistogram', () => {
  it('reports count, percentiles as bucket upper bounds, and the max, between two snapshots', () => {
    const h = new FineHistogram();
    h.record(99);
    const from = h.snapshot();
    for (let i = 0; i < 98; i += 1) h.record(0.1);
    h.record(7.3);
    h.record(42.01);
    h.record(-3); // early counts as on time
    expect(summarize(h.snapshot(), from)).toEqual({ count: 101, p50: 0.25, p99: 7.5, max: 42.25 });
    // From the start, the earlier 99 ms frame is the max.
    expect(summarize(h.snapshot())).toMatchObject({ count: 102, max: 99 });
    expect(summarize(h.snapshot(), h.snapshot())).toEqual({ count: 0, p50: 0, p99: 0, max: 0 });
  });

  it('keeps very late values in the last bucket without losing the max', () => {
    const h = new FineHistogram();
    h.record(250);
    expect(summarize(h.snapshot())).toEqual({ count: 1, p50: 250, p99: 250, max: 250 });
  });
});
